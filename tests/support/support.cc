// Test support code: see the headers in this folder.
