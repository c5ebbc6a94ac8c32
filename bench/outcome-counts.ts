// Seeds that insert a batch's calls with outcomes in one statement (bench:indexes, bench:read, …)
// would move the batch's few outcome counters once per call in one transaction, each update walking
// the versions the earlier ones left (quadratic: 30,000 calls in one statement ~2 s, 100,000 far
// longer). They insert with the counters' insert trigger off, then count every batch at once, as
// the migration outcome_counts does for the calls already there.

const REBUILD_SQL = `
INSERT INTO call_outcome_counts (batch_id, value_hash, status, transcript_status, count)
SELECT c.batch_id, sha256(convert_to(v, 'UTF8')), c.status, COALESCE(c.transcript_status, ''), count(*)::int
  FROM calls c JOIN batches b ON b.id = c.batch_id CROSS JOIN LATERAL call_outcome_values(c.outcomes) v
 WHERE c.outcomes IS NOT NULL
 GROUP BY 1, 2, 3, 4`;

/**
 * Runs `seed` with the insert trigger off, then recounts every batch's outcomes. `run` sends one
 * statement (a pg client's or pool's query, or runStatement on either database).
 */
export async function seedWithoutOutcomeCounts<T>(run: (sql: string) => Promise<unknown>, seed: () => Promise<T>): Promise<T> {
  await run('ALTER TABLE calls DISABLE TRIGGER call_outcome_counts_inserted');
  try {
    return await seed();
  } finally {
    await run('ALTER TABLE calls ENABLE TRIGGER call_outcome_counts_inserted');
    await run('DELETE FROM call_outcome_counts');
    await run(REBUILD_SQL);
  }
}
