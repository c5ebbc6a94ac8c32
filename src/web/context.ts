import type { Api } from './api.ts';
import type { DashboardMeQuery } from '../codegen/graphql.ts';

export interface AppContext {
  api: Api;
  account: DashboardMeQuery['me'];
  showError(e: unknown): void;
  showNotice(message: string): void;
  navigate(hash: string): void;
}

/** A mounted page: its element, and what to stop (subscriptions, timers) when leaving it. */
export interface View {
  el: HTMLElement;
  dispose(): void;
}
