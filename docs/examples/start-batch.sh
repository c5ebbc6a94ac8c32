curl -s -X POST $BASE/call-batches/$BATCH/start -H "Authorization: Bearer $KEY"
