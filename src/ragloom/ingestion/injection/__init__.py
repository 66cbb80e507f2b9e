"""The prompt-injection screen: normalisation, hidden channels and decoding, detectors, one policy.

`screen.scan_injection` is the entry point; `detector.Detector` is the interface a new detector
(a model, say) implements; `semantic` is the exemplar-trained second layer run after the rules.
"""
