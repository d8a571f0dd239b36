// Intentionally empty: the module is the header in include/, whose inline functions are compiled
// into the Swift code that calls them (with that code's target CPU). SwiftPM needs one source file.
