CONTACTS=$(seq 10 29 | sed 's/.*/{"contact_id": "c-&", "phone_number": "+141555501&"}/' | paste -sd, -)
BODY='{"idempotency_key": "first-batch", "agent_name": "Demo Agent", "version_name": "v1",
  "start_mode": "manual", "concurrency": 2, "interruption": true, "use_alternate_number": false,
  "schedule_date": "2026-11-24", "schedule_time": "09:00",
  "schedule_timezone": "America/New_York (EST, UTC-05:00)", "contacts": ['"$CONTACTS"']}'
RESPONSE=$(curl -s -X PUT $BASE/call-batches -H "Authorization: Bearer $KEY" -H 'content-type: application/json' -d "$BODY")
echo "$RESPONSE"; BATCH=$(echo "$RESPONSE" | grep -o 'sched_[0-9a-f]*'); echo "BATCH=$BATCH"
