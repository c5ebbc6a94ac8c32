// What a field costs in the query-cost budget (plugins/query-cost.ts) beyond the default, where the
// schema declares it: the types say it, the plugin only adds it up.

/**
 * Cost of a text field that may hold ~130 KB (a transcript, a prompt): with the complexity budget
 * one query carries about one REST page of them (200 rows), not 25 pages.
 */
export const HEAVY_TEXT_COMPLEXITY = 20;
