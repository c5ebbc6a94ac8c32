-- Call records' exact total without a sum over every batch of the range (docs/indexes.md): the
-- accepted contacts of an account's batches per agent and UTC day of created_at (a record's day),
-- moved by triggers when a batch is inserted, its accepted_contacts set (the create, in its
-- transaction) or it is deleted. Deferred to commit, as batch_counts' are, so a create copying its
-- calls holds no counter row meanwhile; rolled back, they never run.
-- CreateTable
CREATE TABLE "call_record_counts" (
    "account_id" TEXT NOT NULL,
    "day" DATE NOT NULL,
    "agent_id" TEXT NOT NULL,
    "count" BIGINT NOT NULL,

    CONSTRAINT "call_record_counts_pkey" PRIMARY KEY ("account_id","day","agent_id")
);

-- AddForeignKey
ALTER TABLE "call_record_counts" ADD CONSTRAINT "call_record_counts_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;


CREATE FUNCTION "call_record_counts_moved"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  b "batches";
  delta BIGINT;
BEGIN
  IF TG_OP = 'INSERT' THEN b := NEW; delta := NEW."accepted_contacts";
  ELSIF TG_OP = 'UPDATE' THEN b := NEW; delta := NEW."accepted_contacts" - OLD."accepted_contacts";
  ELSE b := OLD; delta := -OLD."accepted_contacts";
  END IF;
  IF delta = 0 THEN RETURN NULL; END IF;
  IF TG_OP = 'DELETE' THEN
    -- An UPDATE only: when the account itself is being deleted its counter rows may be gone already.
    UPDATE "call_record_counts" SET "count" = "count" + delta
     WHERE "account_id" = b."account_id" AND "day" = (b."created_at" AT TIME ZONE 'UTC')::date AND "agent_id" = b."agent_id";
  ELSE
    INSERT INTO "call_record_counts" ("account_id", "day", "agent_id", "count")
      VALUES (b."account_id", (b."created_at" AT TIME ZONE 'UTC')::date, b."agent_id", delta)
      ON CONFLICT ("account_id", "day", "agent_id") DO UPDATE SET "count" = "call_record_counts"."count" + EXCLUDED."count";
  END IF;
  RETURN NULL;
END $$;

CREATE CONSTRAINT TRIGGER "call_record_counts_inserted" AFTER INSERT ON "batches"
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW."accepted_contacts" <> 0)
  EXECUTE FUNCTION "call_record_counts_moved"();

CREATE CONSTRAINT TRIGGER "call_record_counts_changed" AFTER UPDATE OF "accepted_contacts" ON "batches"
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (OLD."accepted_contacts" IS DISTINCT FROM NEW."accepted_contacts")
  EXECUTE FUNCTION "call_record_counts_moved"();

CREATE CONSTRAINT TRIGGER "call_record_counts_deleted" AFTER DELETE ON "batches"
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (OLD."accepted_contacts" <> 0)
  EXECUTE FUNCTION "call_record_counts_moved"();

-- The batches as they stand.
INSERT INTO "call_record_counts" ("account_id", "day", "agent_id", "count")
  SELECT "account_id", ("created_at" AT TIME ZONE 'UTC')::date, "agent_id", sum("accepted_contacts")
    FROM "batches" WHERE "accepted_contacts" <> 0 GROUP BY 1, 2, 3;
