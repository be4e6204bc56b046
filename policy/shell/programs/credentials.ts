/**
 * Programs that print a credential from a store they find themselves (no path on the command
 * line): `gpg --export-secret-keys`, `pass show`, `security find-generic-password`, `gh auth
 * token`, ... As data: the program, the words that make it print a secret, and the store it
 * reads. The store is recorded as a read, so the command is a sensitive-path read.
 */
import type { CommandEnv } from '../effects/env.ts';
import { literalField } from '../syntax/field.ts';
import type { Field } from '../syntax/field.ts';

/** One row: program names, the words (all present) that print a secret, and the store read. */
export interface CredentialRow {
  readonly names: readonly string[];
  readonly when: readonly (readonly string[])[];
  readonly store: string;
}

/** Every credential row. */
export const CREDENTIAL_ROWS: readonly CredentialRow[] = [
  {
    names: ['gpg', 'gpg2'],
    when: [['--export-secret-keys'], ['--export-secret-subkeys'], ['--export-ssh-key']],
    store: '~/.gnupg',
  },
  { names: ['pass', 'gopass', 'passage'], when: [[]], store: '~/.password-store' },
  {
    names: ['security'],
    when: [['find-generic-password'], ['find-internet-password'], ['dump-keychain'], ['export']],
    store: '~/Library/Keychains',
  },
  { names: ['secret-tool'], when: [['lookup'], ['search']], store: '~/.local/share/keyrings' },
  {
    names: ['git'],
    when: [
      ['credential', 'fill'],
      ['credential-store', 'get'],
    ],
    store: '~/.git-credentials',
  },
  {
    names: ['gh'],
    when: [
      ['auth', 'token'],
      ['auth', 'status', '-t'],
      ['auth', 'status', '--show-token'],
    ],
    store: '~/.config/gh',
  },
  {
    names: ['aws'],
    when: [
      ['configure', 'get'],
      ['configure', 'export-credentials'],
    ],
    store: '~/.aws',
  },
  {
    names: ['gcloud'],
    when: [['print-access-token'], ['print-identity-token'], ['print-refresh-token']],
    store: '~/.config/gcloud',
  },
  {
    names: ['kubectl', 'oc'],
    when: [
      ['config', 'view', '--raw'],
      ['config', 'view', '--flatten'],
    ],
    store: '~/.kube',
  },
  { names: ['az'], when: [['get-access-token']], store: '~/.azure' },
  {
    names: ['vault'],
    when: [
      ['print', 'token'],
      ['token', 'lookup'],
    ],
    store: '~/.vault-token',
  },
  {
    names: ['docker-credential-secretservice', 'docker-credential-pass', 'docker-credential-desktop'],
    when: [['get'], ['list']],
    store: '~/.docker/config.json',
  },
];

/** Records the credential store `names` reads when these arguments make it print a secret. */
export function credentialReads(names: readonly string[], args: readonly Field[], env: CommandEnv): void {
  const words = new Set(args.map((a) => a.value ?? ''));
  for (const row of CREDENTIAL_ROWS) {
    if (!names.some((n) => row.names.includes(n))) continue;
    const pass = row.names.includes('pass') || row.names.includes('gopass');
    // pass NAME / pass show NAME print the secret; pass ls / pass git ... do not.
    if (
      pass &&
      (args.length === 0 || ['ls', 'list', 'git', 'init', 'help', 'version'].includes(args[0]?.value ?? ''))
    )
      continue;
    if (
      row.when.some(
        (all) =>
          all.every((w) => words.has(w)) || all.some((w) => [...words].some((x) => x.startsWith(`${w}=`))),
      )
    )
      env.read({ ...literalField(row.store), tilde: true });
  }
}
