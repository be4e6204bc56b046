/**
 * The built-in sensitive host paths and never-writable paths (DESIGN.md §4), as data with stable
 * ids. Config can add entries (`extraSensitive`, `extraNeverWritable`) but never remove or narrow
 * these: the guard always compiles the defaults first.
 */
import { z } from 'zod';

/**
 * One path rule. Pattern forms (always `/`-separated, picomatch globs, matched case-insensitively
 * with dotfiles included):
 * - `~/rest` — under the user's home (the injected home, its canonical form, and the usual home
 *   locations of other users: `/home/*`, `/root`, `/Users/*`, `/var/root`, `X:/Users/*`);
 * - `/abs/path`, `C:/abs`, `*:/abs` (any drive), `//server/share/abs` — absolute;
 * - `**\/rest` or a pattern with no anchor — the name anywhere.
 * Every pattern matches the path itself and everything beneath it.
 */
export interface PathRule {
  /** Stable id reported as the Decision's `rule.id` (e.g. `sensitive.ssh`). */
  readonly id: string;
  readonly description: string;
  readonly patterns: readonly string[];
}

/** Zod schema of a `PathRule` given in config (only ever added to the defaults). */
export const PathRuleInput = z.strictObject({
  id: z
    .string()
    .regex(/^[a-z][a-z0-9-]*(\.[a-z0-9][a-z0-9-]*)+$/, 'a dotted id such as "sensitive.vault-data"'),
  description: z.string().default(''),
  patterns: z
    .array(
      z
        .string()
        .min(1)
        // eslint-disable-next-line no-control-regex
        .refine((p) => !/[\u0000-\u001f\u007f]/.test(p), 'no control characters')
        .refine((p) => !p.startsWith('!'), 'no negated patterns (a rule can only add paths)'),
    )
    .min(1),
});
export type PathRuleInput = z.input<typeof PathRuleInput>;

const HOME_BROWSERS = [
  '~/.mozilla',
  '~/.config/google-chrome',
  '~/.config/google-chrome-beta',
  '~/.config/chromium',
  '~/.config/BraveSoftware',
  '~/.config/microsoft-edge',
  '~/.config/vivaldi',
  '~/.config/opera',
  '~/snap/firefox',
  '~/snap/chromium',
  '~/.var/app/org.mozilla.firefox',
  '~/.var/app/com.google.Chrome',
  '~/.var/app/org.chromium.Chromium',
  '~/Library/Application Support/Google/Chrome',
  '~/Library/Application Support/Chromium',
  '~/Library/Application Support/Firefox',
  '~/Library/Application Support/BraveSoftware',
  '~/Library/Application Support/Microsoft Edge',
  '~/Library/Application Support/Arc',
  '~/Library/Safari',
  '~/Library/Cookies',
  '~/AppData/Local/Google/Chrome/User Data',
  '~/AppData/Local/Chromium/User Data',
  '~/AppData/Local/Microsoft/Edge/User Data',
  '~/AppData/Local/BraveSoftware/Brave-Browser/User Data',
  '~/AppData/Roaming/Mozilla/Firefox',
];

/**
 * Sensitive host paths: refused for reading and writing, in every mode, by every tool, whether
 * reached directly, through `~`, `..` or a symlink. The runtime's own state dir and config file
 * are added per guard (`sensitive.runtime-state`, `sensitive.runtime-config`).
 */
export const SENSITIVE_PATHS: readonly PathRule[] = [
  { id: 'sensitive.ssh', description: 'SSH keys and config', patterns: ['~/.ssh'] },
  { id: 'sensitive.aws', description: 'AWS credentials', patterns: ['~/.aws'] },
  { id: 'sensitive.gnupg', description: 'GnuPG keys', patterns: ['~/.gnupg'] },
  { id: 'sensitive.kube', description: 'Kubernetes credentials', patterns: ['~/.kube'] },
  { id: 'sensitive.docker-config', description: 'Docker registry auth', patterns: ['~/.docker/config.json'] },
  { id: 'sensitive.gcloud', description: 'Google Cloud credentials', patterns: ['~/.config/gcloud'] },
  { id: 'sensitive.gh', description: 'GitHub CLI tokens', patterns: ['~/.config/gh'] },
  { id: 'sensitive.azure', description: 'Azure CLI credentials', patterns: ['~/.azure'] },
  { id: 'sensitive.netrc', description: 'netrc passwords', patterns: ['~/.netrc', '~/_netrc'] },
  {
    id: 'sensitive.git-credentials',
    description: 'git credential store',
    patterns: ['~/.git-credentials', '~/.config/git/credentials'],
  },
  { id: 'sensitive.npmrc', description: 'npm tokens', patterns: ['~/.npmrc'] },
  { id: 'sensitive.pypirc', description: 'PyPI tokens', patterns: ['~/.pypirc'] },
  { id: 'sensitive.pgpass', description: 'PostgreSQL passwords', patterns: ['~/.pgpass'] },
  { id: 'sensitive.vault-token', description: 'HashiCorp Vault token', patterns: ['~/.vault-token'] },
  {
    id: 'sensitive.keychains',
    description: 'macOS keychains',
    patterns: ['~/Library/Keychains', '/Library/Keychains'],
  },
  {
    id: 'sensitive.keyrings',
    description: 'GNOME and KDE keyrings',
    patterns: ['~/.local/share/keyrings', '~/.local/share/kwalletd', '~/.kde/share/apps/kwallet'],
  },
  { id: 'sensitive.password-store', description: 'pass password store', patterns: ['~/.password-store'] },
  {
    id: 'sensitive.windows-credentials',
    description: 'Windows Credential Manager and DPAPI keys',
    patterns: [
      '~/AppData/Roaming/Microsoft/Credentials',
      '~/AppData/Local/Microsoft/Credentials',
      '~/AppData/Roaming/Microsoft/Protect',
      '~/AppData/Roaming/Microsoft/Vault',
      '~/AppData/Local/Microsoft/Vault',
    ],
  },
  {
    id: 'sensitive.browser-profiles',
    description: 'browser profiles (cookies, passwords)',
    patterns: HOME_BROWSERS,
  },
  {
    id: 'sensitive.dev-credentials',
    description: 'tokens of developer tools, package registries, clouds and wallets',
    patterns: [
      '~/.cargo/credentials',
      '~/.cargo/credentials.toml',
      '~/.gem/credentials',
      '~/.composer/auth.json',
      '~/.config/composer/auth.json',
      '~/.m2/settings-security.xml',
      '~/.gradle/gradle.properties',
      '~/.terraform.d/credentials.tfrc.json',
      '~/.config/hub',
      '~/.config/glab-cli',
      '~/.config/rclone/rclone.conf',
      '~/.s3cfg',
      '~/.boto',
      '~/.my.cnf',
      '~/.config/op',
      '~/.config/solana/id.json',
      '~/.ethereum/keystore',
      '~/.bitcoin/wallet.dat',
      '~/.thunderbird',
      '/etc/ssh/ssh_host_*_key',
    ],
  },
  {
    id: 'sensitive.shell-history',
    description: 'shell and REPL histories (typed tokens and passwords)',
    patterns: [
      '~/.bash_history',
      '~/.zsh_history',
      '~/.local/share/fish/fish_history',
      '~/.python_history',
      '~/.node_repl_history',
      '~/.psql_history',
      '~/.mysql_history',
      '~/.sqlite_history',
      '~/.lesshst',
      '~/.viminfo',
    ],
  },
  {
    id: 'sensitive.shadow',
    description: 'password hashes',
    patterns: ['/etc/shadow', '/etc/shadow-', '/etc/gshadow', '/etc/gshadow-', '/etc/master.passwd'],
  },
  { id: 'sensitive.sudoers', description: 'sudo policy', patterns: ['/etc/sudoers', '/etc/sudoers.d'] },
  {
    id: 'sensitive.proc-environ',
    description: 'process environments',
    patterns: ['/proc/*/environ', '/proc/*/task/*/environ'],
  },
  {
    id: 'sensitive.proc-handles',
    description: "another process's view of the file system (cwd, root, open files, memory)",
    patterns: [
      '/proc/*/cwd',
      '/proc/*/root',
      '/proc/*/fd',
      '/proc/*/map_files',
      '/proc/*/mem',
      '/proc/*/task/*/cwd',
      '/proc/*/task/*/root',
      '/proc/*/task/*/fd',
    ],
  },
  {
    id: 'sensitive.windows-hives',
    description: 'Windows registry hives (SAM, SECURITY, SYSTEM)',
    patterns: ['*:/Windows/System32/config'],
  },
];

/**
 * Paths that are never writable, even inside a `read-write` root, because writing them runs code
 * or changes authority later: shell start-up files, git hooks and config, MCP server lists and
 * the agent's own config. Reading them is allowed (roots permitting).
 */
export const NEVER_WRITABLE_PATHS: readonly PathRule[] = [
  {
    id: 'never.shell-rc',
    description: 'shell start-up files',
    patterns: [
      '**/.bashrc',
      '**/.bashrc.d',
      '**/.bash_profile',
      '**/.bash_login',
      '**/.bash_logout',
      '**/.profile',
      '**/.zshrc',
      '**/.zprofile',
      '**/.zshenv',
      '**/.zlogin',
      '**/.zlogout',
      '**/.bash_aliases',
      '**/.bash_functions',
      '**/.kshrc',
      '**/.mkshrc',
      '**/.cshrc',
      '**/.tcshrc',
      '**/.login',
      '**/.logout',
      '**/.zsh',
      '**/.oh-my-zsh/custom',
      '**/.config/fish',
      '**/.config/nushell',
      '**/.config/xonsh',
      '**/.xonshrc',
      '**/.config/elvish',
      '**/.elvish/rc.elv',
      '**/.config/powershell',
      '**/.envrc',
      '**/.pam_environment',
      '**/.xprofile',
      '**/.xinitrc',
      '**/.xsession',
      '**/.config/autostart',
      '**/.config/systemd/user',
      '**/.config/environment.d',
      '**/Documents/PowerShell/*profile.ps1',
      '**/Documents/WindowsPowerShell/*profile.ps1',
    ],
  },
  {
    id: 'never.git-hooks',
    description: 'git hooks (run on the next git command)',
    patterns: ['**/.git/hooks', '**/.git/modules/**/hooks'],
  },
  {
    id: 'never.git-config',
    description: 'git config (core.hooksPath, filters, aliases run code)',
    patterns: [
      '**/.git/config',
      '**/.git/config.worktree',
      '**/.git/modules/**/config',
      '**/.git/worktrees/*/config.worktree',
    ],
  },
  {
    id: 'never.tool-rc',
    description: 'start-up files of git, editors and terminal multiplexers (they run commands)',
    patterns: [
      '**/.gitconfig',
      '**/.config/git/config',
      '**/.vimrc',
      '**/.exrc',
      '**/.config/nvim',
      '**/.vim/plugin',
      '**/.emacs',
      '**/.emacs.d/init.el',
      '**/.tmux.conf',
      '**/.screenrc',
    ],
  },
  { id: 'never.mcp-config', description: 'MCP server list', patterns: ['**/.mcp.json'] },
  {
    id: 'never.agent-config',
    description: 'the agent runtime config',
    patterns: ['**/snotra.config.json', '**/.snotra'],
  },
];

/** Rule ids of the per-guard entries built from the injected state dir and config file. */
export const RUNTIME_RULE_IDS = {
  stateDir: 'sensitive.runtime-state',
  configFile: 'sensitive.runtime-config',
} as const;
