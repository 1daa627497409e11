# SPDX-License-Identifier: MIT
# The process's /tmp/perf-PID.map (where Python 3.12+ with -X perf and JITs name generated code)
# is copied into the trace at exit, byte for byte, so reports symbolize it anywhere; a process
# without one adds nothing.
import os
import stat
import struct
import sys

from probetest import Test

t = Test("perfmap", 0)
python = os.path.realpath(sys.executable)


def perfmap_records(trace):
    data = open(trace, "rb").read()
    off, chunks = struct.unpack_from("<I", data, 12)[0], []  # the header's size
    while off + 16 <= len(data):
        typ, ln, _c, _r = struct.unpack_from("<IIII", data, off)
        if typ == 13:
            chunks.append(data[off + 16:off + 16 + ln])
        off += 16 + ((ln + 7) & ~7)
    return chunks


text = "".join("%x %x py::fn%d:/src/train.py\n" % (0x7f0000000000 + 0x100 * i, 0x80, i)
               for i in range(20000))  # ~700 KB: more than one read
prog = ("import os\n"
        "text = ''.join('%x %x py::fn%d:/src/train.py\\n' % (0x7f0000000000 + 0x100 * i, 0x80, i)"
        " for i in range(20000))\n"
        "open('/tmp/perf-%d.map' % os.getpid(), 'w').write(text)\n"
        "print('wrote')\n")
out = t.path("pm.mgt")
PLAIN = {"MGPROBE_COMPRESS": "0"}  # records read as they are laid out, without zstd
r = t.probe([python, "-c", prog], out, extra_env=PLAIN)
t.eq("program ran", 0, r.returncode)
chunks = perfmap_records(out)
t.eq("perf map copied into the trace byte for byte", text.encode(), b"".join(chunks))
# Removes the map the program left. Only a regular file of exactly the text's size is read: /tmp is
# shared, and other tests plant FIFOs and sparse 1 GiB files under the same names (reading those
# hung or ran this driver out of memory on a busy machine).
for pid_file in [f for f in os.listdir("/tmp") if f.startswith("perf-") and f.endswith(".map")]:
    try:
        st = os.lstat("/tmp/" + pid_file)
        if stat.S_ISREG(st.st_mode) and st.st_size == len(text) and open("/tmp/" + pid_file).read() == text:
            os.unlink("/tmp/" + pid_file)
    except OSError:
        pass

out2 = t.path("none.mgt")
r = t.probe([python, "-c", "print(1)"], out2, extra_env=PLAIN)
t.eq("no perf map: no record", [], perfmap_records(out2))
t.done()
