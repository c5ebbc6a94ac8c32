-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "public";

-- CreateTable
CREATE TABLE "accounts" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "max_batch_size" INTEGER NOT NULL DEFAULT 10000,
    "max_concurrent_calls" INTEGER NOT NULL DEFAULT 20,
    "max_call_duration_seconds" INTEGER NOT NULL DEFAULT 600,
    "rate_limit_per_minute" INTEGER NOT NULL DEFAULT 600,
    "batch_concurrency" INTEGER NOT NULL DEFAULT 5,
    "api_access_enabled" BOOLEAN NOT NULL DEFAULT true,
    "interruption_enabled" BOOLEAN NOT NULL DEFAULT true,
    "recording_enabled" BOOLEAN NOT NULL DEFAULT true,
    "voices" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "provider" TEXT NOT NULL DEFAULT 'simulator',
    "provider_config" TEXT,
    "webhook_secret" TEXT,
    "webhook_secret_previous" TEXT,
    "webhook_secret_rotated_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "accounts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "api_keys" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "key_hash" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "revoked_at" TIMESTAMPTZ(3),
    "last_used_at" TIMESTAMPTZ(3),

    CONSTRAINT "api_keys_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "agents" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "voice" TEXT NOT NULL,
    "recording_enabled" BOOLEAN,
    "outcome_keys" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "provider_agent_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "agents_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "prompt_versions" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "agent_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "prompt" TEXT NOT NULL,
    "provider_agent_version" INTEGER,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "prompt_versions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "did_numbers" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "number" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "did_numbers_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "batches" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "agent_id" TEXT NOT NULL,
    "prompt_version_id" TEXT NOT NULL,
    "did_number_id" TEXT,
    "status" TEXT NOT NULL,
    "start_mode" TEXT NOT NULL,
    "scheduled_at" TIMESTAMPTZ(3) NOT NULL,
    "timezone" TEXT NOT NULL,
    "concurrency" INTEGER NOT NULL,
    "voice" TEXT NOT NULL,
    "interruption" BOOLEAN NOT NULL,
    "use_alternate_number" BOOLEAN NOT NULL,
    "recording_enabled" BOOLEAN NOT NULL,
    "max_duration_seconds" INTEGER NOT NULL,
    "deduplicate_by_phone" BOOLEAN NOT NULL,
    "callback_url" TEXT,
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "idempotency_key" TEXT,
    "total_contacts" INTEGER NOT NULL,
    "accepted_contacts" INTEGER NOT NULL,
    "rejected_contacts" INTEGER NOT NULL,
    "validation_errors" JSONB NOT NULL DEFAULT '[]',
    "queued" INTEGER NOT NULL DEFAULT 0,
    "in_progress" INTEGER NOT NULL DEFAULT 0,
    "completed" INTEGER NOT NULL DEFAULT 0,
    "failed" INTEGER NOT NULL DEFAULT 0,
    "cancelled" INTEGER NOT NULL DEFAULT 0,
    "callbacks" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "started_at" TIMESTAMPTZ(3),
    "completed_at" TIMESTAMPTZ(3),

    CONSTRAINT "batches_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "calls" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "batch_id" TEXT NOT NULL,
    "agent_id" TEXT NOT NULL,
    "prompt_version_id" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "external_id" TEXT NOT NULL,
    "name" TEXT,
    "phone_number" TEXT NOT NULL,
    "alternate_phone" TEXT,
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "status" TEXT NOT NULL,
    "transcript_status" TEXT,
    "duration_seconds" INTEGER,
    "answer_duration_seconds" INTEGER,
    "timestamp" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completed_at" TIMESTAMPTZ(3),
    "hangup_by" TEXT,
    "disconnect_reason" TEXT,
    "summary" TEXT,
    "outcomes" JSONB,
    "recording_available" BOOLEAN,
    "llm_transcript" TEXT,
    "lease_owner" TEXT,
    "lease_expires_at" TIMESTAMPTZ(3),
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "dialed_number" TEXT,
    "used_alternate" BOOLEAN NOT NULL DEFAULT false,
    "provider_call_id" TEXT,
    "next_attempt_at" TIMESTAMPTZ(3),

    CONSTRAINT "calls_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "recordings" (
    "call_id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "content_type" TEXT NOT NULL,
    "data" BYTEA,
    "source_url" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "recordings_pkey" PRIMARY KEY ("call_id")
);

-- CreateTable
CREATE TABLE "call_events" (
    "id" BIGSERIAL NOT NULL,
    "account_id" TEXT NOT NULL,
    "call_id" TEXT NOT NULL,
    "from_status" TEXT,
    "to_status" TEXT NOT NULL,
    "detail" JSONB,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "call_events_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_deliveries" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "batch_id" TEXT NOT NULL,
    "event_type" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "url" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL,
    "last_status_code" INTEGER,
    "last_error" TEXT,
    "lease_owner" TEXT,
    "lease_expires_at" TIMESTAMPTZ(3),
    "delivered_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhook_deliveries_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "rate_limit_windows" (
    "key" TEXT NOT NULL,
    "window_start" TIMESTAMPTZ(3) NOT NULL,
    "count" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "rate_limit_windows_pkey" PRIMARY KEY ("key","window_start")
);

-- CreateTable
CREATE TABLE "provider_events" (
    "id" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "call_id" TEXT,
    "event_type" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "received_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "processed_at" TIMESTAMPTZ(3),

    CONSTRAINT "provider_events_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "api_keys_key_hash_key" ON "api_keys"("key_hash");

-- CreateIndex
CREATE INDEX "api_keys_account_id_idx" ON "api_keys"("account_id");

-- CreateIndex
CREATE UNIQUE INDEX "agents_account_id_name_key" ON "agents"("account_id", "name");

-- CreateIndex
CREATE UNIQUE INDEX "agents_account_id_id_key" ON "agents"("account_id", "id");

-- CreateIndex
CREATE INDEX "prompt_versions_account_id_idx" ON "prompt_versions"("account_id");

-- CreateIndex
CREATE UNIQUE INDEX "prompt_versions_agent_id_name_key" ON "prompt_versions"("agent_id", "name");

-- CreateIndex
CREATE UNIQUE INDEX "did_numbers_account_id_number_key" ON "did_numbers"("account_id", "number");

-- CreateIndex
CREATE INDEX "batches_account_id_created_at_id_idx" ON "batches"("account_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "batches_account_id_status_created_at_idx" ON "batches"("account_id", "status", "created_at" DESC);

-- CreateIndex
CREATE INDEX "batches_account_id_agent_id_created_at_idx" ON "batches"("account_id", "agent_id", "created_at" DESC);

-- CreateIndex
CREATE INDEX "batches_status_scheduled_at_idx" ON "batches"("status", "scheduled_at");

-- CreateIndex
CREATE UNIQUE INDEX "batches_account_id_idempotency_key_key" ON "batches"("account_id", "idempotency_key");

-- CreateIndex
CREATE INDEX "calls_batch_id_seq_idx" ON "calls"("batch_id", "seq");

-- CreateIndex
CREATE INDEX "calls_batch_id_status_seq_idx" ON "calls"("batch_id", "status", "seq");

-- CreateIndex
CREATE INDEX "calls_batch_id_external_id_idx" ON "calls"("batch_id", "external_id");

-- CreateIndex
CREATE INDEX "calls_batch_id_transcript_status_seq_idx" ON "calls"("batch_id", "transcript_status", "seq");

-- CreateIndex
CREATE INDEX "calls_account_id_created_at_id_idx" ON "calls"("account_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "calls_account_id_agent_id_created_at_idx" ON "calls"("account_id", "agent_id", "created_at" DESC);

-- CreateIndex
CREATE INDEX "calls_status_lease_expires_at_idx" ON "calls"("status", "lease_expires_at");

-- CreateIndex
CREATE INDEX "calls_provider_call_id_idx" ON "calls"("provider_call_id");

-- CreateIndex
CREATE INDEX "call_events_call_id_id_idx" ON "call_events"("call_id", "id");

-- CreateIndex
CREATE INDEX "webhook_deliveries_status_next_attempt_at_idx" ON "webhook_deliveries"("status", "next_attempt_at");

-- CreateIndex
CREATE INDEX "webhook_deliveries_batch_id_created_at_idx" ON "webhook_deliveries"("batch_id", "created_at");

-- CreateIndex
CREATE INDEX "provider_events_processed_at_received_at_idx" ON "provider_events"("processed_at", "received_at");

-- AddForeignKey
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "agents" ADD CONSTRAINT "agents_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "prompt_versions" ADD CONSTRAINT "prompt_versions_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "prompt_versions" ADD CONSTRAINT "prompt_versions_agent_id_fkey" FOREIGN KEY ("agent_id") REFERENCES "agents"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "did_numbers" ADD CONSTRAINT "did_numbers_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "batches" ADD CONSTRAINT "batches_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "batches" ADD CONSTRAINT "batches_agent_id_fkey" FOREIGN KEY ("agent_id") REFERENCES "agents"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "batches" ADD CONSTRAINT "batches_prompt_version_id_fkey" FOREIGN KEY ("prompt_version_id") REFERENCES "prompt_versions"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "batches" ADD CONSTRAINT "batches_did_number_id_fkey" FOREIGN KEY ("did_number_id") REFERENCES "did_numbers"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "calls" ADD CONSTRAINT "calls_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "calls" ADD CONSTRAINT "calls_batch_id_fkey" FOREIGN KEY ("batch_id") REFERENCES "batches"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "calls" ADD CONSTRAINT "calls_agent_id_fkey" FOREIGN KEY ("agent_id") REFERENCES "agents"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "calls" ADD CONSTRAINT "calls_prompt_version_id_fkey" FOREIGN KEY ("prompt_version_id") REFERENCES "prompt_versions"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "recordings" ADD CONSTRAINT "recordings_call_id_fkey" FOREIGN KEY ("call_id") REFERENCES "calls"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "call_events" ADD CONSTRAINT "call_events_call_id_fkey" FOREIGN KEY ("call_id") REFERENCES "calls"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_batch_id_fkey" FOREIGN KEY ("batch_id") REFERENCES "batches"("id") ON DELETE CASCADE ON UPDATE CASCADE;

