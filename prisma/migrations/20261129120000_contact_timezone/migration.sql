-- A contact's own time zone (the create's `timezone`), kept apart from the zones a windowed call is
-- judged in (`timezone`): the alternate number is judged in its own zones and this one
-- (docs/campaigns.md "Which zones apply"). Null for calls created before it.
-- AlterTable
ALTER TABLE "calls" ADD COLUMN "contact_timezone" TEXT;
