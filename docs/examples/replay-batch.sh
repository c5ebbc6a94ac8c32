BODY='{"idempotency_key": "first-batch", "agent_name": "Demo Agent", "version_name": "v1",
  "start_mode": "immediate", "interruption": false, "use_alternate_number": false,
  "schedule_date": "2026-11-24", "schedule_time": "09:00", "schedule_timezone": "UTC",
  "contacts": [{"contact_id": "someone-else", "phone_number": "+14155550199"}]}'
curl -s -X PUT $BASE/call-batches -H "Authorization: Bearer $KEY" -H 'content-type: application/json' -d "$BODY"
curl -s $BASE/call-batches/$BATCH -H "Authorization: Bearer $KEY"
