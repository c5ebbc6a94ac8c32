curl -s $BASE/me -H "Authorization: Bearer $KEY"
