H=(-H "Authorization: Bearer $KEY")
curl -s $BASE/call-batches/$BATCH "${H[@]}"
curl -s "$BASE/call-batches?status=active&limit=20" "${H[@]}"
curl -s "$BASE/call-batches/$BATCH/calls?status=completed" "${H[@]}"
curl -s "$BASE/call-batches/$BATCH/results?outcome=interested" "${H[@]}"
curl -s "$BASE/call-records?start_date=$(date -u +%F)&end_date=$(date -u +%F)" "${H[@]}"
