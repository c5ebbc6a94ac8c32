export interface Pin {
  line: number;
  version: string;
  os: string[];
  cpu: string[];
  dir: string;
}
export function choosePin(opts: { range: string; pins: Pin[]; platform: string; arch: string }): Pin | null;
export function pinnedNotice(opts: { current: string; range: string; pin: Pin; where: string; installing: boolean }): string;
export function noPinNotice(opts: { current: string; range: string; platform: string; arch: string }): string;
export function installFailedNotice(opts: { current: string; pin: Pin; error: unknown }): string;
export function installNotice(opts: { current: string; range: string; pin: Pin | null }): string;
