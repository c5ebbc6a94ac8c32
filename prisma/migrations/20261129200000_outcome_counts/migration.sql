-- The results' `?outcome=` total (services/batches/batch-results.ts) without reading the batch's
-- calls: one row per batch, outcome value, status and transcript status, counting the calls that
-- match the filter's jsonpath for that value. Counting the batch's calls cost O(batch): 179-272 ms
-- over a 100k-call batch at ~1M calls (docs/indexes.md); summing these rows is a few index entries.
-- CreateTable
CREATE TABLE "call_outcome_counts" (
    "batch_id" TEXT NOT NULL,
    "value_hash" BYTEA NOT NULL,
    "status" TEXT NOT NULL,
    "transcript_status" TEXT NOT NULL,
    "count" INTEGER NOT NULL,

    CONSTRAINT "call_outcome_counts_pkey" PRIMARY KEY ("batch_id","value_hash","status","transcript_status")
);

-- AddForeignKey
ALTER TABLE "call_outcome_counts" ADD CONSTRAINT "call_outcome_counts_batch_id_fkey" FOREIGN KEY ("batch_id") REFERENCES "batches"("id") ON DELETE CASCADE ON UPDATE CASCADE;


-- The values `v` for which the filter's own condition, `outcomes @? '$.* ? (@ == "v")'`, holds:
-- every string anywhere in the value tried against that very condition (lax jsonpath unwraps arrays
-- at two levels and ignores non-objects, so the condition itself decides, not a copy of its rules).
-- The service writes flat string maps of at most 50 pairs; NULL gives no row.
CREATE FUNCTION "call_outcome_values"(outcomes jsonb) RETURNS SETOF text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT DISTINCT s.v
    FROM jsonb_path_query(outcomes, 'lax $.** ? (@.type() == "string")') AS x(j)
    CROSS JOIN LATERAL (SELECT x.j #>> '{}' AS v) s
   WHERE jsonb_path_exists(outcomes, '$.* ? (@ == $v)', jsonb_build_object('v', s.v), true)
$$;

-- A call inserted with outcomes (the service's creates copy calls without any; tests and seeds
-- insert some). A row trigger with a condition: a created call costs no function call.
CREATE FUNCTION "call_outcome_counts_inserted"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('call_outcome_counts:' || NEW."batch_id", 0));
  INSERT INTO "call_outcome_counts" ("batch_id", "value_hash", "status", "transcript_status", "count")
    SELECT NEW."batch_id", sha256(convert_to(v, 'UTF8')), NEW."status", COALESCE(NEW."transcript_status", ''), 1
      FROM "call_outcome_values"(NEW."outcomes") v ORDER BY 2
  ON CONFLICT ("batch_id", "value_hash", "status", "transcript_status")
    DO UPDATE SET "count" = "call_outcome_counts"."count" + EXCLUDED."count";
  RETURN NULL;
END $$;

CREATE TRIGGER "call_outcome_counts_inserted" AFTER INSERT ON "calls"
  FOR EACH ROW WHEN (NEW."outcomes" IS NOT NULL)
  EXECUTE FUNCTION "call_outcome_counts_inserted"();

-- Updates count once per statement and counter row, from the statement's transition tables: the
-- analysis's group commit gives up to 500 calls of one batch their outcomes in one statement, and
-- a row trigger moved the batch's few counter rows once per call, each update walking the versions
-- the earlier ones left in the transaction (500 calls: 23 ms of trigger beside the statement's
-- 2.4 ms; this way 4-6 ms). Every -1 of a call's old values and +1 of its new ones are summed, so a
-- call whose outcomes, status and transcript status did not move cancels out. Updates of calls
-- without outcomes (claims, leases, dials: most of them) return at the first check (500 rows:
-- ~0.2 ms). Counter rows in key order, their batches locked first (a transaction-level lock per
-- batch, in id order), so two writers of one batch, each in a transaction of several statements,
-- take its counter rows one after the other and never each hold one the other waits for.
CREATE FUNCTION "call_outcome_counts_changed"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM new_calls WHERE "outcomes" IS NOT NULL) AND NOT EXISTS (SELECT 1 FROM old_calls WHERE "outcomes" IS NOT NULL) THEN
    RETURN NULL;
  END IF;
  PERFORM pg_advisory_xact_lock(hashtextextended('call_outcome_counts:' || b, 0))
     FROM (SELECT "batch_id" AS b FROM new_calls WHERE "outcomes" IS NOT NULL
           UNION SELECT "batch_id" FROM old_calls WHERE "outcomes" IS NOT NULL ORDER BY 1) o;
  INSERT INTO "call_outcome_counts" ("batch_id", "value_hash", "status", "transcript_status", "count")
    SELECT "batch_id", h, s, t, sum(d)::int FROM (
      SELECT o."batch_id", sha256(convert_to(v, 'UTF8')) AS h, o."status" AS s, COALESCE(o."transcript_status", '') AS t, -1 AS d
        FROM old_calls o CROSS JOIN LATERAL "call_outcome_values"(o."outcomes") v WHERE o."outcomes" IS NOT NULL
      UNION ALL
      SELECT n."batch_id", sha256(convert_to(v, 'UTF8')), n."status", COALESCE(n."transcript_status", ''), 1
        FROM new_calls n CROSS JOIN LATERAL "call_outcome_values"(n."outcomes") v WHERE n."outcomes" IS NOT NULL) m
    GROUP BY 1, 2, 3, 4 HAVING sum(d) <> 0 ORDER BY 1, 2, 3, 4
  ON CONFLICT ("batch_id", "value_hash", "status", "transcript_status")
    DO UPDATE SET "count" = "call_outcome_counts"."count" + EXCLUDED."count";
  RETURN NULL;
END $$;

CREATE TRIGGER "call_outcome_counts_changed" AFTER UPDATE ON "calls"
  REFERENCING OLD TABLE AS old_calls NEW TABLE AS new_calls
  FOR EACH STATEMENT EXECUTE FUNCTION "call_outcome_counts_changed"();

-- Deletes (retention's chunks, a batch's or an account's calls at once) likewise: as a row trigger,
-- deleting a batch's 100,000 calls would update its few counter rows 100,000 times in one
-- transaction. Counter rows of a deleted batch go with it (foreign key); the update then finds none.
CREATE FUNCTION "call_outcome_counts_removed"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('call_outcome_counts:' || b, 0))
     FROM (SELECT DISTINCT "batch_id" AS b FROM old_calls WHERE "outcomes" IS NOT NULL ORDER BY 1) o;
  UPDATE "call_outcome_counts" c SET "count" = c."count" - d.n
    FROM (SELECT o."batch_id", sha256(convert_to(v, 'UTF8')) AS h, o."status", COALESCE(o."transcript_status", '') AS t, count(*)::int AS n
            FROM old_calls o CROSS JOIN LATERAL "call_outcome_values"(o."outcomes") v
           WHERE o."outcomes" IS NOT NULL
           GROUP BY 1, 2, 3, 4) d
   WHERE c."batch_id" = d."batch_id" AND c."value_hash" = d.h AND c."status" = d."status" AND c."transcript_status" = d.t;
  RETURN NULL;
END $$;

CREATE TRIGGER "call_outcome_counts_removed" AFTER DELETE ON "calls"
  REFERENCING OLD TABLE AS old_calls
  FOR EACH STATEMENT EXECUTE FUNCTION "call_outcome_counts_removed"();

-- The calls that already have outcomes.
INSERT INTO "call_outcome_counts" ("batch_id", "value_hash", "status", "transcript_status", "count")
SELECT c."batch_id", sha256(convert_to(v, 'UTF8')), c."status", COALESCE(c."transcript_status", ''), count(*)::int
  FROM "calls" c JOIN "batches" b ON b."id" = c."batch_id" CROSS JOIN LATERAL "call_outcome_values"(c."outcomes") v
 WHERE c."outcomes" IS NOT NULL
 GROUP BY 1, 2, 3, 4;
