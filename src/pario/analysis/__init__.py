"""Analysis of stored results, pure functions over plain data: no store,
no engine, no plotting.  The front end feeds them what it read; tests feed
them constructed results.

* measured.py: the shape the analysis reads (a figure's points, each with
  every iteration's rate and the engine's result document)
* ideal.py:    the CFS report's ideal curve from a probe's predicted peak
* diagnose.py: rules that explain a figure (cache, straggler, cliff, ...)
* compare.py:  two runs point by point, with a verdict from the noise"""
