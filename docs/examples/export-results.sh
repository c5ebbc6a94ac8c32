curl -fsS -o results.csv "$BASE/call-batches/$BATCH/results.csv" -H "Authorization: Bearer $KEY"
head -n 1 results.csv
