-- Caller-ID pools and local presence (docs/campaigns.md "Caller-ID pools and local presence").
-- Each DID carries where it is local: its NANP area code (null outside +1) and its region (a US
-- number: 'US-' and its state, from the area code; any other: its ISO country), both derived from
-- the number when it is added; its own daily dial cap (null: none; 1..100000); and whether it is
-- the account's pool default (at most one per account; none set: the oldest number is).
ALTER TABLE "did_numbers"
  ADD COLUMN "area_code" TEXT,
  ADD COLUMN "region" TEXT,
  ADD COLUMN "daily_cap" INTEGER,
  ADD COLUMN "is_default" BOOLEAN NOT NULL DEFAULT false,
  ADD CONSTRAINT "did_numbers_daily_cap_check" CHECK ("daily_cap" IS NULL OR "daily_cap" BETWEEN 1 AND 100000);
CREATE UNIQUE INDEX "did_numbers_account_default_key" ON "did_numbers"("account_id") WHERE "is_default";

-- Numbers added before: area code from the number, a US state from src/domain/compliance/area-code-states.ts.
-- A number outside the US (or one with an area code of no state) gets its region when the worker
-- loads the pool (derived the same way), so nothing depends on this backfill being complete.
UPDATE "did_numbers" SET "area_code" = substr("number", 3, 3) WHERE "number" ~ '^\+1[2-9][0-9]{9}$';
UPDATE "did_numbers" d SET "region" = s.region FROM (VALUES
  ('907','US-AK'), ('205','US-AL'), ('251','US-AL'), ('256','US-AL'), ('334','US-AL'), ('659','US-AL'), ('938','US-AL'), ('327','US-AR'), ('479','US-AR'), ('501','US-AR'),
  ('870','US-AR'), ('684','US-AS'), ('480','US-AZ'), ('520','US-AZ'), ('602','US-AZ'), ('623','US-AZ'), ('928','US-AZ'), ('209','US-CA'), ('213','US-CA'), ('279','US-CA'),
  ('310','US-CA'), ('323','US-CA'), ('341','US-CA'), ('350','US-CA'), ('369','US-CA'), ('408','US-CA'), ('415','US-CA'), ('424','US-CA'), ('442','US-CA'), ('510','US-CA'),
  ('530','US-CA'), ('559','US-CA'), ('562','US-CA'), ('619','US-CA'), ('626','US-CA'), ('628','US-CA'), ('650','US-CA'), ('657','US-CA'), ('661','US-CA'), ('669','US-CA'),
  ('707','US-CA'), ('714','US-CA'), ('738','US-CA'), ('747','US-CA'), ('760','US-CA'), ('805','US-CA'), ('818','US-CA'), ('820','US-CA'), ('831','US-CA'), ('840','US-CA'),
  ('858','US-CA'), ('909','US-CA'), ('916','US-CA'), ('925','US-CA'), ('949','US-CA'), ('951','US-CA'), ('303','US-CO'), ('719','US-CO'), ('720','US-CO'), ('748','US-CO'),
  ('970','US-CO'), ('983','US-CO'), ('203','US-CT'), ('475','US-CT'), ('860','US-CT'), ('959','US-CT'), ('202','US-DC'), ('771','US-DC'), ('302','US-DE'), ('239','US-FL'),
  ('305','US-FL'), ('321','US-FL'), ('324','US-FL'), ('352','US-FL'), ('386','US-FL'), ('407','US-FL'), ('448','US-FL'), ('561','US-FL'), ('645','US-FL'), ('656','US-FL'),
  ('689','US-FL'), ('727','US-FL'), ('728','US-FL'), ('754','US-FL'), ('772','US-FL'), ('786','US-FL'), ('813','US-FL'), ('850','US-FL'), ('863','US-FL'), ('904','US-FL'),
  ('941','US-FL'), ('954','US-FL'), ('229','US-GA'), ('404','US-GA'), ('470','US-GA'), ('478','US-GA'), ('678','US-GA'), ('706','US-GA'), ('762','US-GA'), ('770','US-GA'),
  ('912','US-GA'), ('943','US-GA'), ('671','US-GU'), ('808','US-HI'), ('319','US-IA'), ('515','US-IA'), ('563','US-IA'), ('641','US-IA'), ('712','US-IA'), ('208','US-ID'),
  ('986','US-ID'), ('217','US-IL'), ('224','US-IL'), ('309','US-IL'), ('312','US-IL'), ('331','US-IL'), ('447','US-IL'), ('464','US-IL'), ('618','US-IL'), ('630','US-IL'),
  ('708','US-IL'), ('730','US-IL'), ('773','US-IL'), ('779','US-IL'), ('815','US-IL'), ('847','US-IL'), ('872','US-IL'), ('219','US-IN'), ('260','US-IN'), ('317','US-IN'),
  ('463','US-IN'), ('574','US-IN'), ('765','US-IN'), ('812','US-IN'), ('930','US-IN'), ('316','US-KS'), ('620','US-KS'), ('785','US-KS'), ('913','US-KS'), ('270','US-KY'),
  ('364','US-KY'), ('502','US-KY'), ('606','US-KY'), ('859','US-KY'), ('225','US-LA'), ('318','US-LA'), ('337','US-LA'), ('504','US-LA'), ('985','US-LA'), ('339','US-MA'),
  ('351','US-MA'), ('413','US-MA'), ('508','US-MA'), ('617','US-MA'), ('774','US-MA'), ('781','US-MA'), ('857','US-MA'), ('978','US-MA'), ('227','US-MD'), ('240','US-MD'),
  ('301','US-MD'), ('410','US-MD'), ('443','US-MD'), ('667','US-MD'), ('207','US-ME'), ('231','US-MI'), ('248','US-MI'), ('269','US-MI'), ('313','US-MI'), ('517','US-MI'),
  ('586','US-MI'), ('616','US-MI'), ('734','US-MI'), ('810','US-MI'), ('906','US-MI'), ('947','US-MI'), ('989','US-MI'), ('218','US-MN'), ('320','US-MN'), ('507','US-MN'),
  ('612','US-MN'), ('651','US-MN'), ('763','US-MN'), ('952','US-MN'), ('235','US-MO'), ('314','US-MO'), ('417','US-MO'), ('557','US-MO'), ('573','US-MO'), ('636','US-MO'),
  ('660','US-MO'), ('816','US-MO'), ('975','US-MO'), ('670','US-MP'), ('228','US-MS'), ('601','US-MS'), ('662','US-MS'), ('769','US-MS'), ('406','US-MT'), ('252','US-NC'),
  ('336','US-NC'), ('472','US-NC'), ('704','US-NC'), ('743','US-NC'), ('828','US-NC'), ('910','US-NC'), ('919','US-NC'), ('980','US-NC'), ('984','US-NC'), ('701','US-ND'),
  ('308','US-NE'), ('402','US-NE'), ('531','US-NE'), ('603','US-NH'), ('201','US-NJ'), ('551','US-NJ'), ('609','US-NJ'), ('640','US-NJ'), ('732','US-NJ'), ('848','US-NJ'),
  ('856','US-NJ'), ('862','US-NJ'), ('908','US-NJ'), ('973','US-NJ'), ('505','US-NM'), ('575','US-NM'), ('702','US-NV'), ('725','US-NV'), ('775','US-NV'), ('212','US-NY'),
  ('315','US-NY'), ('329','US-NY'), ('332','US-NY'), ('347','US-NY'), ('363','US-NY'), ('516','US-NY'), ('518','US-NY'), ('585','US-NY'), ('607','US-NY'), ('631','US-NY'),
  ('646','US-NY'), ('680','US-NY'), ('716','US-NY'), ('718','US-NY'), ('838','US-NY'), ('845','US-NY'), ('914','US-NY'), ('917','US-NY'), ('929','US-NY'), ('934','US-NY'),
  ('216','US-OH'), ('220','US-OH'), ('234','US-OH'), ('283','US-OH'), ('326','US-OH'), ('330','US-OH'), ('380','US-OH'), ('419','US-OH'), ('440','US-OH'), ('513','US-OH'),
  ('567','US-OH'), ('614','US-OH'), ('740','US-OH'), ('937','US-OH'), ('405','US-OK'), ('539','US-OK'), ('572','US-OK'), ('580','US-OK'), ('918','US-OK'), ('458','US-OR'),
  ('503','US-OR'), ('541','US-OR'), ('971','US-OR'), ('215','US-PA'), ('223','US-PA'), ('267','US-PA'), ('272','US-PA'), ('412','US-PA'), ('445','US-PA'), ('484','US-PA'),
  ('570','US-PA'), ('582','US-PA'), ('610','US-PA'), ('717','US-PA'), ('724','US-PA'), ('814','US-PA'), ('835','US-PA'), ('878','US-PA'), ('787','US-PR'), ('939','US-PR'),
  ('401','US-RI'), ('803','US-SC'), ('821','US-SC'), ('839','US-SC'), ('843','US-SC'), ('854','US-SC'), ('864','US-SC'), ('605','US-SD'), ('423','US-TN'), ('615','US-TN'),
  ('629','US-TN'), ('731','US-TN'), ('865','US-TN'), ('901','US-TN'), ('931','US-TN'), ('210','US-TX'), ('214','US-TX'), ('254','US-TX'), ('281','US-TX'), ('325','US-TX'),
  ('346','US-TX'), ('361','US-TX'), ('409','US-TX'), ('430','US-TX'), ('432','US-TX'), ('469','US-TX'), ('512','US-TX'), ('682','US-TX'), ('713','US-TX'), ('726','US-TX'),
  ('737','US-TX'), ('806','US-TX'), ('817','US-TX'), ('830','US-TX'), ('832','US-TX'), ('903','US-TX'), ('915','US-TX'), ('936','US-TX'), ('940','US-TX'), ('945','US-TX'),
  ('956','US-TX'), ('972','US-TX'), ('979','US-TX'), ('385','US-UT'), ('435','US-UT'), ('801','US-UT'), ('276','US-VA'), ('434','US-VA'), ('540','US-VA'), ('571','US-VA'),
  ('686','US-VA'), ('703','US-VA'), ('757','US-VA'), ('804','US-VA'), ('826','US-VA'), ('948','US-VA'), ('340','US-VI'), ('802','US-VT'), ('206','US-WA'), ('253','US-WA'),
  ('360','US-WA'), ('425','US-WA'), ('509','US-WA'), ('564','US-WA'), ('262','US-WI'), ('274','US-WI'), ('353','US-WI'), ('414','US-WI'), ('534','US-WI'), ('608','US-WI'),
  ('715','US-WI'), ('920','US-WI'), ('304','US-WV'), ('681','US-WV'), ('307','US-WY')
) AS s(area_code, region) WHERE d."area_code" = s.area_code;

-- Dials per DID per UTC day: what the daily cap counts. Incremented by the worker only while under
-- the cap (a conditional upsert), so several workers never take a number past it together.
CREATE TABLE "did_daily_dials" (
  "did_id" TEXT NOT NULL,
  "day" DATE NOT NULL,
  "dials" INTEGER NOT NULL DEFAULT 0,
  CONSTRAINT "did_daily_dials_pkey" PRIMARY KEY ("did_id", "day"),
  CONSTRAINT "did_daily_dials_did_id_fkey" FOREIGN KEY ("did_id") REFERENCES "did_numbers"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
-- The prune's range (old days are deleted with the number_dials prune).
CREATE INDEX "did_daily_dials_day_idx" ON "did_daily_dials"("day");

-- The caller-ID number the call's latest dial was placed from (E.164); null: never dialled.
ALTER TABLE "calls" ADD COLUMN "from_number" TEXT;
