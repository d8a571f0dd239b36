extension Category {
    /// The text to show for this category: its display name, else its category name, else
    /// `#index` (a model without labels). Empty names count as missing.
    ///
    /// ```swift
    /// print("\(category.label) \(category.score)")   // "Egyptian cat 0.78"
    /// ```
    public var label: String {
        if let d = displayName, !d.isEmpty { return d }
        if let n = categoryName, !n.isEmpty { return n }
        return "#\(index)"
    }
}
