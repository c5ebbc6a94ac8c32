// Dashboard entry: the API key (kept in sessionStorage, so it leaves with the tab), the header, an
// error banner that every failure ends up in (nothing leaves a blank page), and hash routing:
//   #/batches            the account's batches, live
//   #/batch/<id>         one batch, its calls, live
//   #/new                a batch from a CSV file
//   #/do-not-call        the account's do-not-call list
//   #/numbers            the account's caller-ID numbers and their health
import './styles.css';
import { DashboardMeDocument } from '../codegen/graphql.ts';
import { Api, ApiError, type LiveState } from './api.ts';
import type { AppContext, View } from './context.ts';
import { h, replace } from './dom.ts';
import { batchView } from './views/batch.ts';
import { batchesView } from './views/batches.ts';
import { createView } from './views/create.ts';
import { doNotCallView } from './views/do-not-call.ts';
import { numbersView } from './views/numbers.ts';

const KEY_STORAGE = 'callBatchDashboard.apiKey';
const root = document.getElementById('app')!;
const banner = h('div', { class: 'banner', role: 'alert', 'aria-live': 'assertive', 'data-testid': 'banner' });
document.body.prepend(banner);

function messageOf(e: unknown): string {
  if (e instanceof ApiError) return e.code && e.code !== 'ERROR' ? `${e.message} (${e.code})` : e.message;
  if (e instanceof Error) return e.message;
  return String(e);
}

function showMessage(text: string, kind: 'error' | 'notice') {
  // The same message twice stays one line.
  for (const existing of banner.querySelectorAll<HTMLElement>('.msg')) if (existing.dataset.text === text) return;
  const msg = h(
    'div',
    { class: `msg ${kind}`, 'data-text': text },
    h('span', null, text),
    h('button', { type: 'button', class: 'close', 'aria-label': 'Dismiss', onclick: () => msg.remove() }, '×'),
  );
  banner.append(msg);
  while (banner.children.length > 3) banner.firstElementChild!.remove();
  if (kind === 'notice') setTimeout(() => msg.remove(), 5000);
}

const showError = (e: unknown) => {
  console.error(e);
  showMessage(messageOf(e), 'error');
};

window.addEventListener('error', (e) => showError(e.error ?? e.message));
window.addEventListener('unhandledrejection', (e) => showError(e.reason));

let api: Api | undefined;
let view: View | undefined;

function keyForm(error?: string) {
  view?.dispose();
  view = undefined;
  api?.dispose();
  api = undefined;
  const input = h('input', {
    type: 'password',
    name: 'apiKey',
    autocomplete: 'off',
    placeholder: 'sk_…',
    required: true,
    'data-testid': 'api-key',
    size: 48,
  });
  const form = h(
    'form',
    { class: 'panel key-form' },
    h('h1', null, 'Call batches'),
    h('p', null, 'Paste an API key to see its account’s batches. The key stays in this browser tab only.'),
    error ? h('p', { class: 'error-text', 'data-testid': 'key-error' }, error) : null,
    h('label', null, 'API key ', input),
    h('button', { type: 'submit', class: 'primary', 'data-testid': 'connect' }, 'Connect'),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const key = input.value.trim();
    if (!key) return;
    sessionStorage.setItem(KEY_STORAGE, key);
    void start(key);
  });
  replace(root, h('main', { class: 'centered' }, form));
  input.focus();
}

function forgetKey(reason?: string) {
  sessionStorage.removeItem(KEY_STORAGE);
  keyForm(reason);
}

async function start(key: string) {
  replace(root, h('p', { class: 'boot' }, 'Connecting…'));
  let authFailed = false;
  const client = new Api(key, (e) => {
    if (authFailed) return;
    authFailed = true;
    forgetKey(e.code === 'FORBIDDEN' ? e.message : 'That API key was not accepted. Check it and try again.');
  });
  api = client;
  let me;
  try {
    me = (await client.request(DashboardMeDocument, {})).me;
  } catch (e) {
    if (!authFailed) {
      // Not a key problem (network, server): keep the key and offer a retry.
      replace(
        root,
        h(
          'main',
          { class: 'centered' },
          h(
            'div',
            { class: 'panel' },
            h('p', { class: 'error-text' }, messageOf(e)),
            h('button', { type: 'button', onclick: () => void start(key) }, 'Retry'),
            ' ',
            h('button', { type: 'button', onclick: () => forgetKey() }, 'Use another key'),
          ),
        ),
      );
    }
    return;
  }
  if (api !== client) return;

  const live = h('span', { class: 'live', 'data-testid': 'live' });
  const nav = {
    batches: h('a', { href: '#/batches' }, 'Batches'),
    dnc: h('a', { href: '#/do-not-call', 'data-testid': 'nav-do-not-call' }, 'Do not call'),
    numbers: h('a', { href: '#/numbers', 'data-testid': 'nav-numbers' }, 'Numbers'),
  };
  const main = h('main', { class: 'content' });
  replace(
    root,
    h(
      'header',
      { class: 'top' },
      h('a', { href: '#/batches', class: 'brand' }, 'Call batches'),
      h('nav', { class: 'nav' }, nav.batches, nav.dnc, nav.numbers),
      h('span', { class: 'spacer' }),
      live,
      h('span', { class: 'account', title: me.email }, me.name),
      h('button', { type: 'button', class: 'small', onclick: () => forgetKey() }, 'Forget key'),
    ),
    main,
  );
  client.onState((s: LiveState) => {
    live.dataset.state = s;
    live.textContent = s === 'live' ? 'Live' : s === 'connecting' ? 'Connecting…' : s === 'offline' ? 'Offline' : '';
    live.hidden = s === 'idle';
  });

  const ctx: AppContext = {
    api: client,
    account: me,
    showError,
    showNotice: (m) => showMessage(m, 'notice'),
    navigate: (hash) => {
      if (location.hash === hash) route();
      else location.hash = hash;
    },
  };

  function route() {
    if (api !== client) return;
    view?.dispose();
    view = undefined;
    // Messages belong to the page they came from.
    banner.replaceChildren();
    const [path, query = ''] = location.hash.replace(/^#/, '').split('?');
    const params = new URLSearchParams(query);
    const parts = path.split('/').filter(Boolean);
    const onDnc = parts[0] === 'do-not-call';
    const onNumbers = parts[0] === 'numbers';
    nav.dnc.toggleAttribute('aria-current', onDnc);
    nav.numbers.toggleAttribute('aria-current', onNumbers);
    nav.batches.toggleAttribute('aria-current', !onDnc && !onNumbers);
    try {
      if (parts[0] === 'batch' && parts[1]) view = batchView(ctx, decodeURIComponent(parts[1]), params);
      else if (parts[0] === 'new') view = createView(ctx);
      else if (parts[0] === 'do-not-call') view = doNotCallView(ctx, params);
      else if (onNumbers) view = numbersView(ctx);
      else view = batchesView(ctx, params);
      replace(main, view.el);
    } catch (e) {
      showError(e);
      replace(main, h('p', { class: 'muted' }, 'This page could not be shown. ', h('a', { href: '#/batches' }, 'Back to batches')));
    }
    window.scrollTo(0, 0);
  }
  window.onhashchange = route;
  route();
}

const saved = sessionStorage.getItem(KEY_STORAGE);
if (saved) void start(saved);
else keyForm();
