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
