#include "common/suggest.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace widen {
namespace {

const std::vector<std::string> kChoices = {"auto", "database", "sort"};

TEST(SuggestTest, TheNameInAnotherCaseIsSuggestedWhateverItsLength) {
  EXPECT_EQ(ClosestName("DATABASE", kChoices), "database");
  EXPECT_EQ(ClosestName("Sort", kChoices), "sort");
  EXPECT_EQ(DidYouMean("AUTO", kChoices), "; did you mean 'auto'?");
}

TEST(SuggestTest, CloseMisspellingsAreSuggestedAndFarOnesAreNot) {
  EXPECT_EQ(ClosestName("databse", kChoices), "database");
  EXPECT_EQ(ClosestName("srot", kChoices), "sort");
  EXPECT_EQ(ClosestName("ordered", kChoices), "");
  EXPECT_EQ(DidYouMean("ordered", kChoices), "");
}

}  // namespace
}  // namespace widen
