-- Every stored value now has a size limit (README, "Limits"; src/domain/limits.ts), enforced where
-- it is written. Values an earlier version stored without one are cut to the limits here, so that
-- a page of rows stays small in memory whatever was stored before.
UPDATE "calls" SET "llm_transcript" = left("llm_transcript", 131072) WHERE length("llm_transcript") > 131072;
UPDATE "calls" SET "summary" = left("summary", 10000) WHERE length("summary") > 10000;
-- Contact metadata has no meaningful prefix: a value far over the 8 KiB limit is dropped.
UPDATE "calls" SET "metadata" = '{}' WHERE octet_length("metadata"::text) > 16384;
UPDATE "batches" SET "metadata" = '{}' WHERE octet_length("metadata"::text) > 32768;
