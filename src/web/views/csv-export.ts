// The batch page's "Export CSV" button: the REST export (GET …/results.csv) fetched with the key in
// its header and saved from a Blob through a temporary object URL, so the key never sits in a URL.
// The file is held in the page's memory until saved (about 1 kB a call).
import type { AppContext } from '../context.ts';
import { h } from '../dom.ts';

function save(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const a = h('a', { href: url, download: name, hidden: true });
  document.body.append(a);
  a.click();
  a.remove();
  // The click has started the download; the URL is not needed after this turn.
  setTimeout(() => URL.revokeObjectURL(url), 0);
}

export function csvExportButton(ctx: AppContext, batchId: string): HTMLButtonElement {
  const button = h(
    'button',
    { type: 'button', class: 'small', 'data-testid': 'export-csv', title: 'Download every call of this batch with its results' },
    'Export CSV',
  );
  button.onclick = async () => {
    button.disabled = true;
    button.textContent = 'Exporting…';
    try {
      const blob = await ctx.api.file(`/api/v1/public/call-batches/${encodeURIComponent(batchId)}/results.csv`);
      save(blob, `${batchId.replace(/[^A-Za-z0-9_-]/g, '')}-results.csv`);
    } catch (e) {
      ctx.showError(e);
    } finally {
      button.disabled = false;
      button.textContent = 'Export CSV';
    }
  };
  return button;
}
