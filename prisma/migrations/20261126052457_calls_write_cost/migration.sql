-- What a created call costs the database (issue 17, bench/create-batch): the composite foreign key
-- from calls to their batch was a referential-integrity trigger per inserted row (a probe of the
-- batch and a row lock each time): a quarter of the database's time on a bulk insert, and more
-- under COPY. Calls are inserted in one place only, services/batches/insert-calls.ts, in the
-- transaction that inserts their batch and with that batch's own account, agent and prompt
-- version, so the per-row check proved what the code already holds (test/batches-create checks
-- it). A statement-level check with a transition table still cost ~10% of the insert (every row
-- copied once more), so none is kept. What the foreign key did besides stays, at no cost to inserts:
-- * deleting batches deletes their calls (ON DELETE CASCADE), once per statement;
-- * neither the calls' nor the batches' keys change (what ON UPDATE CASCADE covered).
ALTER TABLE "calls" DROP CONSTRAINT "calls_batch_id_account_id_agent_id_prompt_version_id_fkey";

-- The foreign key's target, which nothing else reads.
DROP INDEX "batches_id_account_id_agent_id_prompt_version_id_key";

CREATE FUNCTION "batches_delete_calls"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM "calls" c USING old_batches o WHERE c.batch_id = o.id;
  RETURN NULL;
END
$$;

CREATE TRIGGER "batches_delete_calls" AFTER DELETE ON "batches"
  REFERENCING OLD TABLE AS old_batches
  FOR EACH STATEMENT EXECUTE FUNCTION "batches_delete_calls"();

CREATE FUNCTION "refuse_key_change"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'the batch, account, agent and prompt version of a row of table "%" never change', TG_TABLE_NAME
    USING ERRCODE = 'foreign_key_violation';
END
$$;

-- UPDATE OF: an update that doesn't name these columns (every update the service makes) doesn't
-- even evaluate the condition.
CREATE TRIGGER "calls_keys_fixed" BEFORE UPDATE OF "batch_id", "account_id", "agent_id", "prompt_version_id" ON "calls"
  FOR EACH ROW
  WHEN (OLD.batch_id IS DISTINCT FROM NEW.batch_id OR OLD.account_id IS DISTINCT FROM NEW.account_id
     OR OLD.agent_id IS DISTINCT FROM NEW.agent_id OR OLD.prompt_version_id IS DISTINCT FROM NEW.prompt_version_id)
  EXECUTE FUNCTION "refuse_key_change"();

CREATE TRIGGER "batches_keys_fixed" BEFORE UPDATE OF "id", "account_id", "agent_id", "prompt_version_id" ON "batches"
  FOR EACH ROW
  WHEN (OLD.id IS DISTINCT FROM NEW.id OR OLD.account_id IS DISTINCT FROM NEW.account_id
     OR OLD.agent_id IS DISTINCT FROM NEW.agent_id OR OLD.prompt_version_id IS DISTINCT FROM NEW.prompt_version_id)
  EXECUTE FUNCTION "refuse_key_change"();

-- The results' outcome filter read this GIN index of every call's outcome values, whatever the
-- batch or account: a common value ("yes") matched calls across the whole table, which were then
-- thrown away by batch (bench:indexes: 358 ms with it, 270 ms reading the batch without it, on 345k
-- calls; the gap grows with the table). The filter reads the batch's calls instead; every call given
-- outcomes no longer writes GIN entries.
DROP INDEX "calls_outcomes_idx";
