# Read by ctest after the discovered unit tests (TEST_INCLUDE_FILES, tests/CMakeLists.txt): under
# `ctest -j`, a fresh build tree has no timings of earlier runs to order the tests by, so the tests
# that take tens of seconds to minutes on 2 cores are given a COST: they start first instead of
# last, where one of them alone would set the wall time. Costs are rough seconds; a name not
# discovered (renamed, removed) is skipped.
set(_cudal2_long_unit_tests
  JitTest.GeneratedKernelsCompileLoadAndCache 160
  RlPolicy.ZeroShotTrustsTheHeuristicUnlessConfident 25
  TuneLoop.ExhaustiveStoresRewardsAndResumes 20
  TuneLoop.LayoutsLimitTheProblemsToThoseNamed 18
  JitTest.OwnKernelHeadersCompileOnTheirOwn 14
  RlPolicy.FindsNearOptimumFasterThanRandomOnHeldOutShapes 12
  TuneLanes.EveryCandidateOnceOnItsLanesGpuObservedAndStored 10
  LlmProfileTune.TheNewBestIsProfiledAndTheNextPromptShowsIt 10)
set(_cudal2_discovered ${cudal2_unit_tests_TESTS})
while(_cudal2_long_unit_tests)
  list(POP_FRONT _cudal2_long_unit_tests _name _cost)
  list(FIND _cudal2_discovered "${_name}" _at)  # (ctest reads this without policies: no IN_LIST)
  if(NOT _at EQUAL -1)
    set_tests_properties(${_name} PROPERTIES COST ${_cost})
  endif()
endwhile()
