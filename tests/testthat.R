library(testthat)
library(fsgpu)

test_check("fsgpu")
