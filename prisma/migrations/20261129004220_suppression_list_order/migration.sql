-- The do-not-call list at 1,000,000 numbers an account (docs/indexes.md "suppressions"): its pages
-- are ranges of (account_id, created_at DESC, phone_number), its total and its cap read one
-- counter row that triggers keep in the statement that adds or removes numbers.
-- CreateTable
CREATE TABLE "suppression_counts" (
    "account_id" TEXT NOT NULL,
    "count" INTEGER NOT NULL,

    CONSTRAINT "suppression_counts_pkey" PRIMARY KEY ("account_id")
);

-- CreateIndex
CREATE INDEX "suppressions_account_id_created_at_phone_number_idx" ON "suppressions"("account_id", "created_at" DESC, "phone_number");

-- AddForeignKey
ALTER TABLE "suppression_counts" ADD CONSTRAINT "suppression_counts_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;


-- Statement-level: one counter update per statement and account, whatever the rows. Accounts in
-- id order, so two adds (opt-outs of a worker's group commit span accounts) lock them in one order.
CREATE FUNCTION "suppressions_count_added"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "suppression_counts" ("account_id", "count")
    SELECT "account_id", count(*) FROM new_rows GROUP BY "account_id" ORDER BY "account_id"
  ON CONFLICT ("account_id") DO UPDATE SET "count" = "suppression_counts"."count" + EXCLUDED."count";
  RETURN NULL;
END $$;

-- An UPDATE only: when the account itself is being deleted its counter row may be gone already.
CREATE FUNCTION "suppressions_count_removed"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "suppression_counts" c SET "count" = c."count" - d.n
    FROM (SELECT "account_id", count(*) AS n FROM old_rows GROUP BY "account_id") d
   WHERE c."account_id" = d."account_id";
  RETURN NULL;
END $$;

CREATE TRIGGER "suppressions_count_added" AFTER INSERT ON "suppressions"
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "suppressions_count_added"();

CREATE TRIGGER "suppressions_count_removed" AFTER DELETE ON "suppressions"
  REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "suppressions_count_removed"();

-- The lists as they stand.
INSERT INTO "suppression_counts" ("account_id", "count")
  SELECT "account_id", count(*) FROM "suppressions" GROUP BY "account_id";
