# SPDX-License-Identifier: MIT
"""The doctor from Python says what gdr-info says: the same JSON data,
the same text, the same exit status; check() raises with the library's
remedies when GPUDirect RDMA is not usable (no GPU here)."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys

import gpudirect
from gpudirect import GdrError

import support
from support import raises


def gdr_info(*args: str) -> subprocess.CompletedProcess:
    prog = os.path.join(support.need_build(), "tools", "gdr-info", "gdr-info")
    return subprocess.run([prog, *args], capture_output=True, text=True,
                          timeout=120)


def test_report_is_gdr_info_json():
    r = gpudirect.report()
    g = gdr_info("--json")
    assert g.returncode in (0, 1), g.stderr
    assert r == json.loads(g.stdout)
    assert r["schema"] == "libgpudirect-report"
    assert isinstance(r["items"], list) and r["items"]
    for item in r["items"]:
        assert {"section", "key", "value", "verdict", "remedy"} <= set(item)
    assert any(i["section"] == support.DEVICE for i in r["items"])


def test_report_on_named_devices():
    r = gpudirect.report([support.DEVICE])
    assert any(i["section"] == support.DEVICE for i in r["items"])
    e = raises(GdrError, gpudirect.report, ["mlx5_99"])
    assert e.errno == errno.ENODEV
    raises(GdrError, gpudirect.report, support.DEVICE)  # a str, not a list


def test_check_raises_with_the_remedies():
    r = gpudirect.report()
    if r["gpudirect_rdma_usable"]:
        support.skip("GPUDirect RDMA is usable here: check() returns")
    e = raises(GdrError, gpudirect.check)
    assert e.errno == errno.EOPNOTSUPP and e.call == "check"
    assert e.sentence.startswith("GPUDirect RDMA is not usable on this node: ")
    for i in r["items"]:
        if i["verdict"] in ("missing", "wrong"):
            assert f"{i['section']} {i['key']}: {i['value']}" in e.sentence
            assert i["remedy"] in e.sentence


def test_python_m_gpudirect_prints_what_gdr_info_prints():
    env = dict(os.environ)
    py = subprocess.run([sys.executable, "-m", "gpudirect"], env=env,
                        capture_output=True, text=True, timeout=120)
    g = gdr_info()
    assert py.stdout == g.stdout and py.returncode == g.returncode, py.stderr
    assert "GPUDirect RDMA" in py.stdout
    js = subprocess.run([sys.executable, "-m", "gpudirect", "--json", "-d",
                         support.DEVICE], env=env, capture_output=True,
                        text=True, timeout=120)
    assert json.loads(js.stdout) == json.loads(
        gdr_info("--json", "-d", support.DEVICE).stdout)
    bad = subprocess.run([sys.executable, "-m", "gpudirect", "-d", "nope"],
                         env=env, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "nope" in bad.stderr


def test_report_devices_argument_edges():
    for bad in (support.DEVICE, [1], [support.DEVICE, None], [b"standin0"]):
        e = raises(GdrError, gpudirect.report, bad)
        assert e.errno == errno.EINVAL and "list of RDMA device names" in \
            e.sentence, bad
    # [] names none: the report of the node and its GPUs, no RDMA device
    r = gpudirect.report([])
    assert not any(i["section"] == support.DEVICE for i in r["items"])
    assert any(i["section"] == "node" for i in r["items"]), r


def test_report_text_is_gdr_info_text():
    t = gpudirect.report_text()
    assert t == gdr_info().stdout and not t.lstrip().startswith("{")
    assert gpudirect.report_text([support.DEVICE]) == \
        gdr_info("-d", support.DEVICE).stdout


def test_report_closes_what_it_opens():
    log = support.Log()
    gpudirect.report()
    gpudirect.report_text([support.DEVICE])
    lines = log.lines()
    opened = [x.split()[2] for x in lines if x.startswith("ibv_open_device")]
    closed = [x.split()[2] for x in lines if x.startswith("ibv_close_device")]
    assert opened and sorted(opened) == sorted(closed), lines


DEVICES_CHILD = r"""
import json, sys
import gpudirect
try:
    out = {"devices": gpudirect.devices()}
except gpudirect.GdrError as e:
    out = {"devices": [e.errno, e.call]}
out["sections"] = sorted({i["section"] for i in gpudirect.report()["items"]})
try:
    gpudirect.report(["standin0"])
    out["named"] = "reported"
except gpudirect.GdrError as e:
    out["named"] = [e.errno, e.sentence]
print(json.dumps(out))
"""


def test_report_covers_every_device_and_none():
    """Without devices: every RDMA device (two here); on a node without
    any, naming one is ENODEV."""
    r = support.run_python(DEVICES_CHILD, env={"STANDIN_DEVICES": "2"})
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["devices"] == ["standin0", "standin1"], out
    assert {"standin0", "standin1"} <= set(out["sections"]), out
    # an empty list, and no list at all (a kernel without RDMA)
    for n in ("0", "none"):
        r = support.run_python(DEVICES_CHILD, env={"STANDIN_DEVICES": n})
        assert r.returncode == 0, r.stderr
        out = json.loads(r.stdout.strip().splitlines()[-1])
        # devices() says why there is no list at all (ENOSYS)
        assert out["devices"] == ([] if n == "0" else
                                  [errno.ENOSYS, "ibv_get_device_list"]), out
        assert "standin0" not in out["sections"], out
        assert out["named"][0] == errno.ENODEV, (n, out)
        assert "no RDMA device" in out["named"][1], (n, out)
