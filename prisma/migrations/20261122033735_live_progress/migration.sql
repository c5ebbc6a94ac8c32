-- Live progress (subscriptions): every API process LISTENs and reads what changed, whichever
-- process (API, worker) made the change. The triggers need no cooperation from the writers.

-- CreateIndex
CREATE INDEX "calls_batch_id_updated_at_idx" ON "calls"("batch_id", "updated_at");

-- A batch's status or counters changed (or a batch was created). NOTIFY is transactional: it is
-- delivered at commit, and identical payloads of one transaction collapse into one, so a flush of
-- many call writes on one batch costs one notification.
CREATE OR REPLACE FUNCTION "notify_batch_changed"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('batch_changed', json_build_object('batch_id', NEW.id, 'account_id', NEW.account_id)::text);
  RETURN NULL;
END
$$;

CREATE TRIGGER "batches_notify_insert" AFTER INSERT ON "batches"
  FOR EACH ROW EXECUTE FUNCTION "notify_batch_changed"();

CREATE TRIGGER "batches_notify_update" AFTER UPDATE ON "batches"
  FOR EACH ROW
  WHEN (OLD.status IS DISTINCT FROM NEW.status
     OR OLD.queued <> NEW.queued OR OLD.in_progress <> NEW.in_progress OR OLD.completed <> NEW.completed
     OR OLD.failed <> NEW.failed OR OLD.cancelled <> NEW.cancelled OR OLD.callbacks <> NEW.callbacks
     OR OLD.started_at IS DISTINCT FROM NEW.started_at OR OLD.completed_at IS DISTINCT FROM NEW.completed_at)
  EXECUTE FUNCTION "notify_batch_changed"();

-- A call's status or results changed. Lease renewals and other bookkeeping don't match the WHEN
-- clause, so they cost no function call.
CREATE OR REPLACE FUNCTION "notify_calls_changed"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('calls_changed', json_build_object('batch_id', NEW.batch_id, 'account_id', NEW.account_id)::text);
  RETURN NULL;
END
$$;

CREATE TRIGGER "calls_notify_update" AFTER UPDATE ON "calls"
  FOR EACH ROW
  WHEN (OLD.status IS DISTINCT FROM NEW.status
     OR OLD.transcript_status IS DISTINCT FROM NEW.transcript_status
     OR OLD.recording_available IS DISTINCT FROM NEW.recording_available)
  EXECUTE FUNCTION "notify_calls_changed"();

-- Readers find changed calls by updated_at; a writer that changes what they show but forgets the
-- column still moves it.
CREATE OR REPLACE FUNCTION "calls_touch_updated_at"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.updated_at := now();
  RETURN NEW;
END
$$;

CREATE TRIGGER "calls_touch_updated_at" BEFORE UPDATE ON "calls"
  FOR EACH ROW
  WHEN (OLD.updated_at IS NOT DISTINCT FROM NEW.updated_at
    AND (OLD.status IS DISTINCT FROM NEW.status
      OR OLD.transcript_status IS DISTINCT FROM NEW.transcript_status
      OR OLD.recording_available IS DISTINCT FROM NEW.recording_available))
  EXECUTE FUNCTION "calls_touch_updated_at"();
