curl -s -X POST $BASE/call-batches/$BATCH/pause -H "Authorization: Bearer $KEY"
curl -s -X POST $BASE/call-batches/$BATCH/resume -H "Authorization: Bearer $KEY"
curl -s -X POST $BASE/call-batches/$BATCH/cancel -H "Authorization: Bearer $KEY"
