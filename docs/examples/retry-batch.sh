EXPIRES=$(date -u -d '+1 day' +%FT%TZ)
BODY='{"agent_name": "Demo Agent", "version_name": "v1", "start_mode": "immediate",
  "interruption": true, "use_alternate_number": false, "schedule_date": "2026-11-24",
  "schedule_time": "09:00", "schedule_timezone": "UTC",
  "retry": {"max_attempts": 3, "on": ["no_answer", "busy", "voicemail"], "delay_seconds": 60},
  "expires_at": "'"$EXPIRES"'",
  "contacts": [
    {"contact_id": "r-1", "phone_number": "+14155550144", "metadata": {"sim": "busy,completed"}},
    {"contact_id": "r-2", "phone_number": "+14155550145", "metadata": {"sim": "voicemail"}}]}'
curl -s -X POST $BASE/call-batches -H "Authorization: Bearer $KEY" -H 'content-type: application/json' -d "$BODY"
