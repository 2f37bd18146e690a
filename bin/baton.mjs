#!/usr/bin/env node
import '../dist/baton.mjs';
