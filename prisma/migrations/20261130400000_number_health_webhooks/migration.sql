-- Number health's webhooks are opt-in per account (docs/webhooks.md "number.rested and number.restored"):
-- a callback_url receives its batch's events, and a receiver written for those alone never gets others.
ALTER TABLE "accounts" ADD COLUMN "number_health_webhooks" BOOLEAN NOT NULL DEFAULT false;
