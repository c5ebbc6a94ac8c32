// The agent and prompt-version selects of the create form. The agents arrive once the catalog
// loads; the versions always follow the chosen agent.
import type { DashboardCatalogQuery } from '../../codegen/graphql.ts';
import { h, replace } from '../dom.ts';

type Agent = DashboardCatalogQuery['agents'][number];

export interface AgentPicker {
  el: HTMLElement;
  agentId(): string;
  versionId(): string;
  show(agents: Agent[]): void;
  /** The catalog could not be read: the select says why nothing can be chosen. */
  unavailable(): void;
}

/** `onChange` runs whenever the chosen agent or its version list changes. */
export function agentPicker(onChange: () => void): AgentPicker {
  let agents: Agent[] = [];
  const agentSelect = h('select', { name: 'agent', required: true, 'data-testid': 'agent' }, h('option', { value: '' }, 'Loading…'));
  const versionSelect = h('select', { name: 'version', required: true, 'data-testid': 'version' });

  function showVersions() {
    const agent = agents.find((a) => a.id === agentSelect.value);
    replace(
      versionSelect,
      (agent?.promptVersions ?? []).map((v) => h('option', { value: v.id }, v.name)),
    );
    onChange();
  }
  agentSelect.addEventListener('change', showVersions);

  return {
    el: h('div', { class: 'row' }, h('label', null, 'Agent ', agentSelect), h('label', null, 'Prompt version ', versionSelect)),
    agentId: () => agentSelect.value,
    versionId: () => versionSelect.value,
    show(list) {
      agents = list;
      replace(
        agentSelect,
        agents.length ? agents.map((a) => h('option', { value: a.id }, a.name)) : h('option', { value: '' }, 'No agents on this account'),
      );
      showVersions();
    },
    unavailable() {
      replace(agentSelect, h('option', { value: '' }, 'Agents could not be loaded (reload to retry)'));
    },
  };
}
