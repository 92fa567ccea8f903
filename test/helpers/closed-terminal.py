"""Start a command on a real pseudo-terminal, wait for a line, then close the terminal.

Usage: python3 closed-terminal.py <ready-text> <watch-seconds> <command> [args...]

The command runs in a session of its own with the pty's slave as its controlling terminal (as a
shell started in a terminal window runs it); once <ready-text> has appeared on the terminal, the
master is closed, as when the window is closed (the kernel hangs up the terminal: SIGHUP, and
reads and writes then fail with EIO). The child is then watched for <watch-seconds>: whether it
exits, when, and how much CPU time it spends meanwhile (utime + stime, from /proc and wait4). If it is still
running, it is sent SIGTERM and watched 5 s more, then killed. One JSON object on stdout says
what happened; the terminal's output goes to stderr.
"""
import json
import os
import pty
import select
import signal
import sys
import time

ready_text = sys.argv[1].encode()
watch_s = float(sys.argv[2])
argv = sys.argv[3:]
ticks = os.sysconf('SC_CLK_TCK')


def cpu_ms(pid):
    try:
        with open(f'/proc/{pid}/stat') as f:
            fields = f.read().rsplit(')', 1)[1].split()
        # utime + stime, and cutime + cstime: wait4 below counts the children it reaped too.
        return (int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14])) * 1000 // ticks
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return None


exit_cpu_ms = None


def wait_exit(pid, seconds):
    """(status, seconds waited) or (None, seconds) if still running; records the CPU time it used."""
    global exit_cpu_ms
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done == pid:
            exit_cpu_ms = round((usage.ru_utime + usage.ru_stime) * 1000)
            return status, time.monotonic() - start
        time.sleep(0.02)
    return None, time.monotonic() - start


def describe(status):
    if status is None:
        return None
    if os.WIFSIGNALED(status):
        return {'signal': signal.Signals(os.WTERMSIG(status)).name}
    return {'code': os.WEXITSTATUS(status)}


pid, master = pty.fork()
if pid == 0:
    os.execvp(argv[0], argv)

seen = b''
deadline = time.monotonic() + 300
while ready_text not in seen:
    if time.monotonic() > deadline:
        os.kill(pid, signal.SIGKILL)
        print(json.dumps({'error': 'not ready', 'output': seen.decode(errors='replace')[-2000:]}))
        sys.exit(1)
    r, _, _ = select.select([master], [], [], 1)
    if r:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            chunk = b''
        if not chunk:
            print(json.dumps({'error': 'terminal closed before ready', 'output': seen.decode(errors='replace')[-2000:]}))
            sys.exit(1)
        seen += chunk
sys.stderr.write(seen.decode(errors='replace'))

cpu_before = cpu_ms(pid)
os.close(master)
status, waited = wait_exit(pid, watch_s)
result = {'exitedAfterClose': describe(status), 'exitMs': round(waited * 1000) if status is not None else None}
if status is not None:
    result['cpuMsAfterClose'] = exit_cpu_ms - (cpu_before or 0)
else:
    result['cpuMsWhileWatched'] = (cpu_ms(pid) or 0) - (cpu_before or 0)
    result['watchedMs'] = round(waited * 1000)
    os.kill(pid, signal.SIGTERM)
    status, waited = wait_exit(pid, 5)
    result['afterSigterm'] = describe(status)
    if status is None:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        result['killed'] = True
print(json.dumps(result))
