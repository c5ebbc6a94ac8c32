-- The batch list's exact total without counting the list (docs/indexes.md "batches"): one row per
-- account and stored status, moved by triggers when a batch is inserted, changes status or is
-- deleted. The triggers are deferred to commit: a create holds its transaction open while it copies
-- its calls, and an immediate increment would hold the account's counter row (and every other
-- create of that account) that long. Rolled back, they never run.
-- CreateTable
CREATE TABLE "batch_counts" (
    "account_id" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "count" INTEGER NOT NULL,

    CONSTRAINT "batch_counts_pkey" PRIMARY KEY ("account_id","status")
);

-- AddForeignKey
ALTER TABLE "batch_counts" ADD CONSTRAINT "batch_counts_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;


-- Rows in status order, so two commits moving one account's counters lock them in one order.
CREATE FUNCTION "batch_counts_moved"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO "batch_counts" ("account_id", "status", "count") VALUES (NEW."account_id", NEW."status", 1)
      ON CONFLICT ("account_id", "status") DO UPDATE SET "count" = "batch_counts"."count" + 1;
  ELSIF TG_OP = 'UPDATE' THEN
    INSERT INTO "batch_counts" ("account_id", "status", "count")
      SELECT NEW."account_id", s, n FROM (VALUES (OLD."status", -1), (NEW."status", 1)) d(s, n) ORDER BY s
      ON CONFLICT ("account_id", "status") DO UPDATE SET "count" = "batch_counts"."count" + EXCLUDED."count";
  ELSE
    -- An UPDATE only: when the account itself is being deleted its counter rows may be gone already.
    UPDATE "batch_counts" SET "count" = "count" - 1 WHERE "account_id" = OLD."account_id" AND "status" = OLD."status";
  END IF;
  RETURN NULL;
END $$;

CREATE CONSTRAINT TRIGGER "batch_counts_inserted" AFTER INSERT ON "batches"
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION "batch_counts_moved"();

CREATE CONSTRAINT TRIGGER "batch_counts_status_changed" AFTER UPDATE OF "status" ON "batches"
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (OLD."status" IS DISTINCT FROM NEW."status")
  EXECUTE FUNCTION "batch_counts_moved"();

CREATE CONSTRAINT TRIGGER "batch_counts_deleted" AFTER DELETE ON "batches"
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION "batch_counts_moved"();

-- The batches as they stand.
INSERT INTO "batch_counts" ("account_id", "status", "count")
  SELECT "account_id", "status", count(*) FROM "batches" GROUP BY "account_id", "status";
