#!/bin/bash
# Session 29 call 1 (one H100, 2026-12-06 06:13 UTC): session 28's prepared call 3 as it was
# (old = 2c13c18, b = 0beaee7, mid = 38037bc carried; new = the working tree = cd37187).
exec bash docs/data/gpu-h100/session28/call3/command.sh "${1:-150}"
