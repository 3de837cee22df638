#!/bin/bash
# Session 28 call 1 (ran on one H100: the H200 kind could not be started). Session 27's prepared
# call as it was: old = 2c13c18 (old/), new = the working tree = 38037bc + the recycled
# generalized requests (committed after this call).
exec bash docs/data/gpu-h200/session27/call1/command.sh "${1:-420}"
