-- Batch options (src/domain/batch-options.ts): what a call reaching voicemail does ('hangup' or
-- 'leave_message'; null: the provider's own behaviour) and the message it leaves (at most 1,000
-- characters), both checked at create.
ALTER TABLE "batches" ADD COLUMN "voicemail" TEXT, ADD COLUMN "voicemail_message" TEXT;
