// Run before the tests and the demo: makes sure what they need is here, or says exactly what to install.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/** Like the runtime's own lookup: PATH, then the sbin folders Debian and Homebrew use. */
function has(cmd) {
  if (spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0) return true;
  return ['/usr/sbin', '/usr/local/sbin', '/usr/local/bin', '/opt/homebrew/bin'].some((d) =>
    existsSync(`${d}/${cmd}`),
  );
}

/** Debian package → the program it installs. */
const PROGRAM = { 'nats-server': 'nats-server', bubblewrap: 'bwrap', chromium: 'chromium' };

/**
 * Installs Debian packages as root. Two test commands started at once on a fresh machine both
 * find a program missing: the second waits for the first under one lock (flock), then installs
 * only what is still missing (nothing, usually); apt itself waits for a dpkg lock another apt
 * holds instead of failing at once.
 */
function aptInstall(packages) {
  const wait = '-o DPkg::Lock::Timeout=600';
  const stillMissing = packages
    .map((p) => `command -v ${PROGRAM[p]} >/dev/null || [ -x /usr/sbin/${PROGRAM[p]} ] || need="$need ${p}"`)
    .join('; ');
  const script =
    `need=""; ${stillMissing}; ` +
    `if [ -n "$need" ]; then apt-get ${wait} update -q && apt-get ${wait} install -y -q $need; fi`;
  execFileSync('flock', ['-w', '1800', '/var/lock/snotra-ensure-deps.lock', 'sh', '-c', script], {
    stdio: 'inherit',
  });
}

if (!existsSync('node_modules/.package-lock.json')) {
  console.log('ensure-deps: installing npm dependencies (npm ci)…');
  execFileSync('npm', ['ci'], { stdio: 'inherit' });
}

// Debian package name → the program it installs. bubblewrap is the OS sandbox of every shell
// and git child (without it, allow-mode shell needs a human for every call); Linux only.
const missing = [];
if (!has('nats-server')) missing.push('nats-server');
if (process.platform === 'linux' && !has('bwrap')) missing.push('bubblewrap');
// The browser tests and `snotra app` (the desktop window) drive Debian's Chromium; `npm start` does not need it.
if (
  (process.argv.includes('--tests') || process.argv.includes('--app')) &&
  !has('chromium') &&
  !process.env.CHROME_PATH
)
  missing.push('chromium');
if (missing.length > 0) {
  if (process.getuid?.() === 0 && has('apt-get')) {
    console.log(`ensure-deps: installing ${missing.join(', ')} with apt-get…`);
    aptInstall(missing);
  } else {
    const brew = missing.filter((m) => m !== 'bubblewrap' && m !== 'chromium');
    console.error(
      `Snotra needs: ${missing.join(', ')}.\n` +
        `  Debian/Ubuntu: sudo apt-get install -y ${missing.join(' ')}\n` +
        (brew.length > 0 ? `  macOS:         brew install ${brew.join(' ')}\n` : '') +
        (missing.includes('bubblewrap')
          ? '  (bubblewrap is the OS sandbox for shell and git commands: apt-get install -y bubblewrap)'
          : ''),
    );
    process.exit(1);
  }
}
