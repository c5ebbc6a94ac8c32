-- Whether a call that reached voicemail left its batch's message (docs/campaigns.md "Voicemail");
-- null: voicemail was not reached, or what happened there is unknown.
ALTER TABLE "calls" ADD COLUMN "voicemail_left" BOOLEAN;
