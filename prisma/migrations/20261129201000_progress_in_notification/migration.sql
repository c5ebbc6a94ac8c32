-- Live progress without a read per change: the notification of a batch change carries the batch's
-- progress as the changing statement left it, numbered by `progress_seq`. A row lock orders the
-- changes of one batch, so the number grows in commit order: an API process keeps the highest it
-- has seen and drops any older value that reaches it later (after a read, or a reconnect).
ALTER TABLE "batches" ADD COLUMN "progress_seq" INTEGER NOT NULL DEFAULT 0;

CREATE OR REPLACE FUNCTION "batches_bump_progress_seq"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.progress_seq := OLD.progress_seq + 1;
  RETURN NEW;
END
$$;

-- The same changes as the notification's WHEN clause (migration live_progress).
CREATE TRIGGER "batches_bump_progress_seq" BEFORE UPDATE ON "batches"
  FOR EACH ROW
  WHEN (OLD.status IS DISTINCT FROM NEW.status
     OR OLD.queued <> NEW.queued OR OLD.in_progress <> NEW.in_progress OR OLD.completed <> NEW.completed
     OR OLD.failed <> NEW.failed OR OLD.cancelled <> NEW.cancelled OR OLD.callbacks <> NEW.callbacks
     OR OLD.started_at IS DISTINCT FROM NEW.started_at OR OLD.completed_at IS DISTINCT FROM NEW.completed_at)
  EXECUTE FUNCTION "batches_bump_progress_seq"();

-- ~550 bytes, well under NOTIFY's 8,000-byte payload limit: every value is a number, a timestamp,
-- or an id or status the service itself generates (no client text).
CREATE OR REPLACE FUNCTION "notify_batch_changed"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('batch_changed', json_build_object(
    'batch_id', NEW.id, 'account_id', NEW.account_id, 'progress_seq', NEW.progress_seq,
    'status', NEW.status, 'start_mode', NEW.start_mode, 'agent_id', NEW.agent_id,
    'total_contacts', NEW.total_contacts, 'accepted_contacts', NEW.accepted_contacts, 'rejected_contacts', NEW.rejected_contacts,
    'queued', NEW.queued, 'in_progress', NEW.in_progress, 'completed', NEW.completed, 'failed', NEW.failed,
    'cancelled', NEW.cancelled, 'callbacks', NEW.callbacks,
    'created_at', NEW.created_at, 'started_at', NEW.started_at, 'completed_at', NEW.completed_at, 'updated_at', NEW.updated_at)::text);
  RETURN NULL;
END
$$;
