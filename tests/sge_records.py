"""A valid Grid Engine accounting record in both layouts (colon text and a JSONL
record), for tests to vary field by field."""

from __future__ import annotations

import json
from typing import Any

#: One valid colon record (45 fields): job 17 of alice, 100 s on node1.
GOOD = (
    "all.q:node1:users:alice:job:17:sge:0:1700000000:1700000010:1700000110:0:0:100:"
    "90.0:10.0:2048:0:0:0:0:10:0:0:0:0:0:0:0:5:1:NONE:defaultdepartment:NONE:1:0:"
    "100.000000:1.000000:0.001000:-l h_rt=3600:0.000000:NONE:1048576.000000:0:0"
)
#: The same job as a JSONL record (read it, do not change it: copy first).
GOOD_JSON: dict[str, Any] = json.loads(
    '{"job_number":17,"task_number":0,"start_time":1700000010000000,'
    '"end_time":1700000110000000,"owner":"alice","group":"users","account":"sge",'
    '"qname":"all.q","hostname":"node1","department":"defaultdepartment","slots":1,'
    '"job_name":"job","priority":0,"submission_time":1700000000000000,'
    '"category":"-l h_rt=3600","failed":0,"exit_status":0,'
    '"usage":{"rusage":{"ru_wallclock":100,"ru_utime":90.0,"ru_stime":10.0},'
    '"eusage":{"wallclock":100.0,"cpu":100.0,"mem":1.0,"io":0.0,"iow":0.0,'
    '"maxvmem":1048576.0,"maxrss":524288.0}}}'
)
