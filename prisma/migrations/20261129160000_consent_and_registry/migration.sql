-- Consent records on calls (docs/campaigns.md "Consent records"), the national do-not-call
-- registry and reassigned-number results (docs/campaigns.md "National do-not-call registry").

-- AlterTable
ALTER TABLE "accounts" ADD COLUMN "registry_consent_exempt" BOOLEAN NOT NULL DEFAULT false;

-- AlterTable
ALTER TABLE "calls" ADD COLUMN "consent_source" TEXT,
ADD COLUMN "consent_at" TIMESTAMPTZ(3),
ADD COLUMN "consent_text" TEXT,
ADD COLUMN "consent_reference" TEXT;

-- One row per NPA-NXX: 10,000 numbers in 1,250 bytes (stored inline, under the TOAST threshold).
CREATE TABLE "dnc_registry_blocks" (
    "prefix" INTEGER NOT NULL,
    "bits" bit(10000) NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "dnc_registry_blocks_pkey" PRIMARY KEY ("prefix"),
    CONSTRAINT "dnc_registry_blocks_prefix_check" CHECK ("prefix" BETWEEN 200200 AND 999999)
);

-- CreateTable
CREATE TABLE "reassigned_numbers" (
    "number" BIGINT NOT NULL,
    "reassigned_on" DATE NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "reassigned_numbers_pkey" PRIMARY KEY ("number")
);

-- Whether an E.164 number is on the registry: one primary-key probe and a bit test. Only US-shaped
-- +1 numbers (NPA and NXX starting 2-9) can be listed; CASE keeps substr's casts from other numbers.
CREATE FUNCTION registry_listed(phone text) RETURNS boolean
  LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN phone ~ '^\+1[2-9][0-9]{2}[2-9][0-9]{6}$'
    THEN EXISTS (SELECT 1 FROM dnc_registry_blocks b
                  WHERE b.prefix = substr(phone, 3, 6)::int AND get_bit(b.bits, substr(phone, 9, 4)::int) = 1)
    ELSE false END
$$;

-- Whether a +1 number was reassigned on or after the UTC day of `since` (a consent's time): the
-- results give a day, not an instant, so the day of the consent itself counts against it.
CREATE FUNCTION registry_reassigned_since(phone text, since timestamptz) RETURNS boolean
  LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN since IS NOT NULL AND phone ~ '^\+1[0-9]{10}$'
    THEN EXISTS (SELECT 1 FROM reassigned_numbers r
                  WHERE r.number = substr(phone, 3)::bigint AND r.reassigned_on >= (since AT TIME ZONE 'UTC')::date)
    ELSE false END
$$;

-- Whether the registry refuses dialling `phone` for the call `call_id` (the claim and the alternate
-- number's dial ask): a reassignment on or after the call's consent refuses it; else a listed
-- number is refused unless the call has a consent record and its account exempts those. A number
-- that is not +1 costs nothing; a +1 number a primary-key probe of calls, accounts, the registry and,
-- with a consent, the reassigned numbers.
CREATE FUNCTION registry_refuses_call(phone text, call_id text) RETURNS boolean
  LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN phone !~ '^\+1[0-9]{10}$' THEN false ELSE COALESCE((
    SELECT CASE
             WHEN c.consent_at IS NOT NULL AND registry_reassigned_since(phone, c.consent_at) THEN true
             WHEN NOT registry_listed(phone) THEN false
             WHEN c.consent_at IS NULL THEN true
             ELSE NOT a.registry_consent_exempt
           END
      FROM calls c JOIN accounts a ON a.id = c.account_id
     WHERE c.id = call_id), false) END
$$;
