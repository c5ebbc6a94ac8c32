// How the new batch runs: when it starts (with the date, time and zone when it starts at a set
// time), its concurrency and the call options, and its label.
import type { CallBatchStartMode, CreateCallBatchInput } from '../../codegen/graphql.ts';
import { h } from '../dom.ts';

export type BatchSettingsInput = Omit<CreateCallBatchInput, 'agentId' | 'versionId' | 'contacts'>;

const START_MODES: [CallBatchStartMode, string][] = [
  ['immediate', 'Immediately'],
  ['manual', 'Manually (start it later)'],
  ['scheduled', 'At a set time'],
];

function localZone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  } catch {
    return 'UTC';
  }
}

/** Ten minutes from now, local, as the date and time inputs write it. */
function soon(): { date: string; time: string } {
  const d = new Date(Date.now() + 10 * 60_000);
  const pad = (n: number) => String(n).padStart(2, '0');
  return { date: `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`, time: `${pad(d.getHours())}:${pad(d.getMinutes())}` };
}

export interface BatchSettings {
  /** The start-mode, schedule and options rows, in form order. */
  els: HTMLElement[];
  input(): BatchSettingsInput;
}

export function batchSettings(defaultConcurrency: number): BatchSettings {
  const modeInputs = START_MODES.map(([m]) =>
    h('input', { type: 'radio', name: 'startMode', value: m, checked: m === 'immediate', 'data-testid': `mode-${m}` }),
  );
  const { date, time } = soon();
  const dateInput = h('input', { type: 'date', name: 'date', value: date });
  const timeInput = h('input', { type: 'time', name: 'time', value: time });
  const zoneInput = h('input', { type: 'text', name: 'zone', value: localZone(), size: 22, 'aria-label': 'Time zone (IANA)' });
  const schedule = h(
    'fieldset',
    { class: 'schedule', hidden: true },
    h('legend', null, 'Schedule'),
    h('label', null, 'Date ', dateInput),
    h('label', null, 'Time ', timeInput),
    h('label', null, 'Time zone ', zoneInput),
  );
  const concurrency = h('input', {
    type: 'number',
    name: 'concurrency',
    min: 1,
    placeholder: String(defaultConcurrency),
    'aria-label': 'Concurrency',
  });
  const interruption = h('input', { type: 'checkbox', name: 'interruption', checked: true });
  const alternate = h('input', { type: 'checkbox', name: 'alternate' });
  const dedupe = h('input', { type: 'checkbox', name: 'dedupe' });
  // Its limit is the server's to check (the bundle imports no server code): a long one is refused with the reason.
  const label = h('input', { type: 'text', name: 'label', size: 30, 'aria-label': 'Label' });

  const mode = () => (modeInputs.find((i) => i.checked)?.value ?? 'immediate') as CallBatchStartMode;
  for (const i of modeInputs) i.addEventListener('change', () => (schedule.hidden = mode() !== 'scheduled'));

  const els = [
    h(
      'fieldset',
      { class: 'modes' },
      h('legend', null, 'Start'),
      modeInputs.map((input, i) => h('label', null, input, ' ', START_MODES[i][1])),
    ),
    schedule,
    h(
      'div',
      { class: 'row' },
      h('label', null, 'Concurrency ', concurrency),
      h('label', { class: 'check' }, interruption, ' Interruption'),
      h('label', { class: 'check' }, alternate, ' Try alternate number'),
      h('label', { class: 'check' }, dedupe, ' Remove duplicate phones'),
    ),
    h('div', { class: 'row' }, h('label', null, 'Label ', label)),
  ];

  return {
    els,
    input() {
      const conc = concurrency.value.trim();
      return {
        startMode: mode(),
        interruption: interruption.checked,
        useAlternateNumber: alternate.checked,
        deduplicateByPhone: dedupe.checked,
        // A cleared date or time means the default the form opened with.
        scheduleDate: dateInput.value || date,
        scheduleTime: timeInput.value || time,
        scheduleTimezone: zoneInput.value.trim() || 'UTC',
        ...(conc ? { concurrency: Number(conc) } : {}),
        ...(label.value.trim() ? { label: label.value.trim() } : {}),
      };
    },
  };
}
