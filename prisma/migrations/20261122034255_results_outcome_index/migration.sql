-- Results filtered by an outcome value: jsonb_ops indexes every value of the outcomes object
-- whatever its key, which `outcomes @? '$.* ? (@ == "<value>")'` uses.

-- CreateIndex
CREATE INDEX "calls_outcomes_idx" ON "calls" USING GIN ("outcomes" jsonb_ops);
