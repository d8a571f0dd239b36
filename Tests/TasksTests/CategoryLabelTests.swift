import XCTest
import Tasks

/// `Category.label`, the one text every caller shows for a category (classify, detect, the
/// annotator, `visionStyleDescription`).
final class CategoryLabelTests: XCTestCase {
    func testDisplayNameThenCategoryNameThenIndex() {
        XCTAssertEqual(Category(index: 3, score: 0.5, categoryName: "cat", displayName: "Katze").label, "Katze")
        XCTAssertEqual(Category(index: 3, score: 0.5, categoryName: "cat", displayName: "").label, "cat")
        XCTAssertEqual(Category(index: 3, score: 0.5, categoryName: "cat", displayName: nil).label, "cat")
        XCTAssertEqual(Category(index: 3, score: 0.5, categoryName: "", displayName: nil).label, "#3")
        XCTAssertEqual(Category(index: 7, score: 0.5, categoryName: nil, displayName: nil).label, "#7")
    }

    func testVisionStyleDescriptionUsesTheLabel() {
        let head = Classifications(headIndex: 0, categories: [Category(index: 0, score: 0.25, categoryName: "cat", displayName: "Katze"),
                                                              Category(index: 4, score: 0.1, categoryName: nil, displayName: nil)])
        XCTAssertEqual(ImageClassifierResult(classifications: [head]).visionStyleDescription(), "(0.25) Katze\n(0.10) #4")
    }
}
