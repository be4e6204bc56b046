/**
 * Stable rule ids of shell analysis. Hardline ids name a rule that denies a command in every
 * mode; unanalyzable ids name why a command could not be analyzed (approval required even in
 * `allow`). Ids are part of the Decision contract: never rename one, only add.
 */

/** Every hardline rule: stable id and a one-line title (for explanations and docs). */
export const HARDLINE_RULES = [
  { id: 'hardline.rm-recursive-root', title: 'recursive delete of the file system root (/, /*, C:\\)' },
  {
    id: 'hardline.rm-recursive-home',
    title: 'recursive delete of a home directory (~, $HOME, /home/x, /Users/x)',
  },
  {
    id: 'hardline.rm-recursive-system',
    title: 'recursive delete of a system directory (/etc, /usr, C:\\Windows, ...)',
  },
  {
    id: 'hardline.find-delete-protected',
    title: 'find over /, ~ or a system directory with -delete or -exec rm',
  },
  { id: 'hardline.rsync-delete-protected', title: 'rsync --delete into /, ~ or a system directory' },
  { id: 'hardline.mv-protected', title: 'moving /, ~ or a system directory away' },
  { id: 'hardline.mkfs', title: 'creating a file system (mkfs*, mke2fs, mkswap, newfs)' },
  { id: 'hardline.dd-device', title: 'dd writing to a device (of=/dev/...)' },
  {
    id: 'hardline.partition-table',
    title: 'partition table editors (fdisk, sfdisk, cfdisk, gdisk, sgdisk, parted)',
  },
  { id: 'hardline.wipefs', title: 'wiping file system signatures (wipefs)' },
  { id: 'hardline.shred-device', title: 'shred of a device' },
  { id: 'hardline.diskutil-erase', title: 'diskutil erase/zero/partition verbs' },
  { id: 'hardline.windows-format', title: 'Windows format of a drive' },
  { id: 'hardline.diskpart', title: 'Windows diskpart' },
  {
    id: 'hardline.powershell-disk-destroy',
    title: 'Format-Volume, Clear-Disk, Initialize-Disk, Remove-Partition',
  },
  { id: 'hardline.block-device-redirect', title: 'shell redirection into a device (> /dev/sda)' },
  {
    id: 'hardline.block-device-write',
    title: 'a command writing to a device (tee /dev/sda, cp x /dev/disk0)',
  },
  { id: 'hardline.fork-bomb', title: 'a function that calls itself in a pipeline or in the background' },
  { id: 'hardline.chmod-recursive-protected', title: 'chmod -R on /, ~ or a system directory' },
  { id: 'hardline.chown-recursive-protected', title: 'chown/chgrp -R on /, ~ or a system directory' },
  { id: 'hardline.system-shutdown', title: 'shutdown, reboot, halt, poweroff, init 0/6, systemctl poweroff' },
  { id: 'hardline.kill-all-processes', title: 'kill of every process (kill -9 -1, killall5)' },
  {
    id: 'hardline.git-push-force',
    title: 'git push --force / -f / --force-with-lease / --force-if-includes / --mirror',
  },
  { id: 'hardline.git-push-force-refspec', title: 'git push with a +refspec (forced update)' },
  { id: 'hardline.git-filter-branch', title: 'git filter-branch (history rewrite)' },
  { id: 'hardline.git-filter-repo', title: 'git filter-repo (history rewrite)' },
  {
    id: 'hardline.windows-recursive-delete',
    title: 'del /s, erase /s, rd /s, rmdir /s on a drive root or system directory',
  },
  { id: 'hardline.remove-item-recursive', title: 'Remove-Item -Recurse on a drive root or system directory' },
  {
    id: 'hardline.registry-delete-hklm',
    title: 'registry delete under HKLM (reg delete, Remove-Item HKLM:)',
  },
  { id: 'hardline.shadow-copy-delete', title: 'deleting Windows shadow copies (vssadmin delete shadows)' },
  {
    id: 'hardline.disk-erase',
    title:
      'erasing or overwriting a disk (cryptsetup erase, badblocks -w, hdparm --security-erase, blkdiscard, nvme format)',
  },
  {
    id: 'hardline.volume-destroy',
    title: 'destroying a volume or pool (zpool destroy, zfs destroy, lvremove -f, vgremove, pvremove)',
  },
  { id: 'hardline.kill-all-user', title: 'killing every process of a user (pkill -u, killall -u, kill -1)' },
  {
    id: 'hardline.power-off-bus',
    title: 'power-off, reboot or logout through D-Bus (dbus-send, busctl, gdbus, qdbus ... PowerOff)',
  },
  { id: 'hardline.git-hooks-path', title: 'git config core.hooksPath (points git at hooks it then runs)' },
  {
    id: 'hardline.force-push-other',
    title:
      'forced remote update through another program (hub push -f, git send-pack --force, gh repo sync --force)',
  },
  {
    id: 'hardline.recursive-runtime-state',
    title: "recursive delete or permission change of a tree that holds the runtime's state dir",
  },
  {
    id: 'hardline.runtime-control',
    title: "an agent deciding its own approvals through the runtime's CLI (snotra inbox approve|deny)",
  },
] as const;

/** A hardline rule id. */
export type HardlineRuleId = (typeof HARDLINE_RULES)[number]['id'];

/** Every reason a command can be unanalyzable: stable id and a one-line title. */
export const UNANALYZABLE_RULES = [
  { id: 'unanalyzable.parse-error', title: 'the command does not parse cleanly (ERROR or MISSING node)' },
  {
    id: 'unanalyzable.heredoc-delimiter',
    title: 'a here-document whose end the parser and bash may see differently',
  },
  { id: 'unanalyzable.hidden-substitution', title: 'a command substitution the parser did not structure' },
  { id: 'unanalyzable.dynamic-program', title: 'the program name is not a literal ($x, $(...), globs)' },
  { id: 'unanalyzable.dynamic-code', title: 'code passed to eval, sh -c, trap, alias ... is not a literal' },
  {
    id: 'unanalyzable.shell-stdin',
    title: 'a shell or interpreter reads code from a non-literal stdin (curl | sh)',
  },
  {
    id: 'unanalyzable.dynamic-argument',
    title: 'a non-literal argument decides whether a hardline rule applies',
  },
  {
    id: 'unanalyzable.indirect-evaluation',
    title: 'a literal with a command substitution that bash may evaluate later',
  },
  {
    id: 'unanalyzable.generated-script',
    title: 'the command writes a script and runs it in the same command',
  },
  { id: 'unanalyzable.encoded-command', title: 'an encoded command (powershell -EncodedCommand)' },
  {
    id: 'unanalyzable.inline-interpreter-code',
    title: 'inline interpreter code that runs processes or deletes trees',
  },
  {
    id: 'unanalyzable.unfollowable-runner',
    title: 'a runner whose commands cannot be followed (parallel, tmux, screen)',
  },
  { id: 'unanalyzable.git-alias', title: 'git -c alias.* (an alias may run anything)' },
  { id: 'unanalyzable.depth-exceeded', title: 'nested sh -c / eval deeper than the analysis bound' },
  { id: 'unanalyzable.limit-exceeded', title: 'expansion or wrapper limits exceeded' },
  { id: 'unanalyzable.input-too-large', title: 'the command string is too large to analyze' },
  { id: 'unanalyzable.internal-error', title: 'the analyzer failed internally (fail closed)' },
] as const;

/** An unanalyzable rule id. */
export type UnanalyzableRuleId = (typeof UNANALYZABLE_RULES)[number]['id'];

/**
 * Every caution: an effect the analysis cannot account for statically. The command is still
 * checked for hardline rules and sensitive paths (deny wins); otherwise a human decides, even in
 * `allow` mode. Each id maps to a reason code (policy/shell-step.ts).
 */
export const CAUTION_RULES = [
  {
    id: 'caution.dynamic-path',
    title: 'a path position holds a variable or command substitution ($x, $(...))',
  },
  { id: 'caution.linked-path', title: 'a path made a link earlier in the same command (ln, ln -s)' },
  { id: 'caution.dynamic-cwd', title: 'cd to a directory only known at run time (cd "$d", cd -)' },
  { id: 'caution.pipeline-targets', title: 'a command deletes or changes paths read from a pipe' },
  {
    id: 'caution.interpreter-code',
    title: 'inline interpreter code (python -c, node -e, perl -e, deno eval, Rscript -e, make -f -)',
  },
  { id: 'caution.other-shell', title: 'code for a shell other than bash (nu -c, xonsh -c, elvish -c)' },
] as const;

/** A caution rule id. */
export type CautionRuleId = (typeof CAUTION_RULES)[number]['id'];
