-- Provider routing (docs/providers.md "Routing and failover"): an account may list its voice
-- providers in order, each with a weight (the first provider of a dial is drawn by weight) and its
-- own sealed config. No rows: the account dials through accounts.provider alone, as before.
CREATE TABLE "account_providers" (
    "account_id" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "position" INTEGER NOT NULL,
    "weight" INTEGER NOT NULL DEFAULT 1,
    "config" TEXT,
    CONSTRAINT "account_providers_pkey" PRIMARY KEY ("account_id", "provider"),
    CONSTRAINT "account_providers_weight_check" CHECK ("weight" BETWEEN 0 AND 1000)
);
ALTER TABLE "account_providers" ADD CONSTRAINT "account_providers_account_id_fkey"
    FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The provider that placed the call's current dial (written with provider_call_id); null: the
-- account's provider (calls dialled before routing existed).
ALTER TABLE "calls" ADD COLUMN "provider" TEXT;
