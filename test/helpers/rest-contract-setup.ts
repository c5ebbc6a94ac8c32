// Vitest setup file: REST responses that tests fetch over real HTTP from a loopback server (an
// in-process app.listen() or a child process) are checked against the OpenAPI document too.
import { checkedResponse } from './rest-contract.ts';

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);
const realFetch = globalThis.fetch;

globalThis.fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
  const response = await realFetch(input, init);
  const url = new URL(input instanceof Request ? input.url : String(input));
  if (!LOOPBACK.has(url.hostname)) return response;
  const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
  return checkedResponse(method, url.href, response);
};
